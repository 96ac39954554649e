"""The `calibrated` default profile: its constants are what scripts/fit_profile.py derives from
../shared/data, each result's reason shows the weights and arithmetic, and the tier thresholds
(with their meaning) are applied as stated."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path

import pytest

from agentlens.formats.stream import read_paths
from agentlens.process import calibrated_fit
from agentlens.process.calibrated import FEATURES, DonorBaseline, features, logistic
from agentlens.process.profiles import CALIBRATED, DEFAULT_PROFILE, get_profile
from agentlens.process.protocols import score_splits, split_cohort
from agentlens.process.result import ProcessResult
from agentlens.process.score import FAILING_VERDICTS
from agentlens.process.signals import Signal
from agentlens.process.tiers import MEANING
from tests.conftest import BENCH, FORMATS
from tests.process.label_scripts import script


def test_the_fit_script_reproduces_the_profile_constants() -> None:
    """Re-running the whole fit (seeded, deterministic) writes exactly the committed file."""
    fit = script("fit_profile")
    runs, baseline = fit.dev_runs()
    fitted = fit.final(runs)
    text = fit.constants_text(fitted, baseline, runs)
    assert text == Path(calibrated_fit.__file__).read_text(encoding="utf-8")
    assert CALIBRATED.terms == fitted.terms and CALIBRATED.lucky_below == fitted.boundary
    assert tuple(term.signal for term in fitted.terms) == FEATURES  # every signal, no selection


@pytest.fixture(scope="module")
def scored() -> list[ProcessResult]:
    trajs = read_paths([BENCH / "trajectories" / "psf__requests-1724"]).trajectories
    return score_splits(split_cohort(trajs, "agentlens-bench", k=5, seed=42))


def test_calibrated_is_the_default_and_its_reason_shows_the_arithmetic(
    scored: list[ProcessResult],
) -> None:
    assert DEFAULT_PROFILE == "calibrated" and get_profile() is CALIBRATED
    for res in scored:
        assert res.profile == "calibrated"
        z = CALIBRATED.intercept
        for term in CALIBRATED.terms:
            x = res.signals[term.signal].value
            z += term.weight * (x - term.mean) / term.sd
            shown = f"{term.weight:+.4f}·({term.signal} {x:.4f} − {term.mean:.4f})/{term.sd:.4f}"
            assert shown in res.composite.reason
        assert res.score == pytest.approx(100 / (1 + math.exp(-z)))
        assert res.composite.reason.endswith(f"= {z:.3f}) = {res.score:.2f}")
        assert res.outcome_term == 0.0  # no outcome term


def test_tiers_apply_the_stated_thresholds(scored: list[ProcessResult]) -> None:
    boundary, ideal = calibrated_fit.BOUNDARY, calibrated_fit.IDEAL_MIN
    assert CALIBRATED.lucky_below == CALIBRATED.partial_fail_min == boundary < ideal
    seen = set()
    for res in scored:
        if res.outcome == "passed":
            want = "ideal" if res.score >= ideal else "lucky" if res.score < boundary else "solid"
        else:
            want = "partial_fail" if res.score >= boundary else "off_track"
        assert res.tier == want and res.tier_reason.endswith(MEANING[want])
        seen.add(want)
    assert {"lucky", "ideal"} <= seen  # both tiers occur on this real task


def test_donor_baseline_is_kept_with_the_reference(scored: list[ProcessResult]) -> None:
    reason = scored[0].signals["f1_rel"].reason
    assert re.search(r"donors each scored against the other 4", reason), reason


def test_a_saved_reference_scores_as_the_cohort_does(
    scored: list[ProcessResult], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`reference build` saves the donors' baseline, so `score --reference` gives the cohort's
    calibrated scores (not the dev-mean fallback)."""
    import json

    from agentlens.cli import main

    task, ref = BENCH / "trajectories" / "psf__requests-1724", tmp_path / "ref.json"
    assert main(["reference", "build", str(task), "-o", str(ref)]) == 0
    assert json.loads(ref.read_text())["donor_baseline"]["reason"].startswith("mean of 5 donors")
    capsys.readouterr()
    assert main(["score", str(task), "--reference", str(ref), "--json"]) == 0
    by_id = {d["trajectory_id"]: d for d in map(json.loads, capsys.readouterr().out.splitlines())}
    for res in scored:
        assert by_id[res.trajectory_id]["score_reason"] == res.composite.reason


def test_a_reference_without_a_baseline_scores_with_the_dev_task_mean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reference file of an older version (or another profile) saves no donor baseline: the
    dev tasks' mean is used, and the reason says so. A damaged baseline is refused instead
    (tests/process/test_hardening_inputs.py): it once failed every run, or scored them all 100."""
    import json

    from agentlens.cli import main

    task, ref = BENCH / "trajectories" / "psf__requests-1724", tmp_path / "ref.json"
    assert main(["reference", "build", str(task), "-o", str(ref)]) == 0
    doc = json.loads(ref.read_text())
    del doc["donor_baseline"]
    ref.write_text(json.dumps(doc))
    capsys.readouterr()
    run = next(task.glob("*-pass-*.json"))
    assert main(["score", str(run), "--reference", str(ref), "--json"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert "dev-task mean" in json.loads(line)["signals"]["f1_rel"]["reason"]


def test_a_run_of_no_steps_scores_the_floor_not_an_extrapolation() -> None:
    """A real Codex session that recorded no step scored 66.4 (coherent, never diverging, no
    waste: everything an empty run trivially is), above many passing runs; it now scores 0 and
    the reason says why. `paper` keeps Eq. 1 as published."""
    from agentlens.formats import read_path
    from agentlens.process.reference import build_reference
    from agentlens.process.score import score_trajectory

    empty = FORMATS / "codex" / "jnarowski-agentcmd" / "stream" / "stream-output-multi-1.jsonl"
    (run,) = read_path(empty)
    assert not run.steps
    donors = read_paths([BENCH / "trajectories" / "psf__requests-1724"]).trajectories
    reference = build_reference([t for t in donors if t.outcome.status == "passed"][:5])
    res = score_trajectory(run, reference)
    assert res.n_states == 0 and res.score == 0.0
    assert res.composite.reason.startswith("no steps")
    assert score_trajectory(run, reference, "paper").score > 0  # Eq. 1 untouched


def test_the_divergence_signal_is_the_share_of_the_path_followed(
    scored: list[ProcessResult],
) -> None:
    """`div` is the share of the best reference path followed before the first miss, below 1
    for every run that diverged. It was the release's divergence_fraction (the first missed
    position over the run's OWN states), which reached 1 ("never diverged") or more for a short
    run that diverged: 11 of the 319 dev runs, a 1-state failing run scored Partial-fail."""
    diverged = [res for res in scored if res.divergence.index is not None]
    assert diverged
    for res in diverged:
        div, found = res.signals["div"], res.divergence
        assert 0 <= div.value < 1
        assert div.value == pytest.approx(found.index / found.path_length)  # type: ignore[operator]
        shown = f"{found.index} of {found.path_length} path states before the first miss"
        assert f"{shown} = {div.value:.3f}" in div.reason
    assert all(res.signals["div"].value == 1 for res in scored if res.divergence.index is None)


def test_the_printed_reason_recomputes_to_the_printed_score() -> None:
    """A user recomputing 100·σ(…) from the printed numbers must land on the printed score: with
    weights to 2 decimals and means/sds to 3 the dev cohort was off by up to 0.56 points, and
    sympy__sympy-12481 opus-4.6 recomputed to 70.9 (solid) beside a printed 70.54 (lucky)."""
    trajs = read_paths([BENCH / "trajectories" / "sympy__sympy-12481"]).trajectories
    for res in score_splits(split_cohort(trajs, "agentlens-bench", k=5, seed=42)):
        reason = res.composite.reason
        z = float(re.match(r"100·σ\(([+-][\d.]+)", reason).group(1))  # type: ignore[union-attr]
        term = r"([+-][\d.]+)·\((\w+) (-?[\d.]+) − (-?[\d.]+)\)/([\d.]+)"
        for weight, _, x, mean, sd in re.findall(term, reason):
            z += float(weight) * (float(x) - float(mean)) / float(sd)
        assert 100 / (1 + math.exp(-z)) == pytest.approx(res.score, abs=0.05), reason


@pytest.mark.parametrize("score", [71.7996, 85.7996, 71.8004, 50.0])
def test_the_printed_score_stays_on_its_side_of_every_tier_threshold(score: float) -> None:
    """To 2 decimals 71.7996 read "= 71.80", beside a tier reason saying 71.7996 < 71.8 →
    lucky; the reason now prints as many decimals as keep it below the boundary."""
    z_wanted = math.log(score / (100 - score))
    signals = {t.signal: Signal(t.signal, t.mean, "") for t in CALIBRATED.terms}
    config = replace(CALIBRATED, intercept=z_wanted)
    composite = logistic(config, signals)
    assert composite.value == pytest.approx(score)
    shown = composite.reason.rsplit("= ", 1)[1]
    for threshold in (CALIBRATED.lucky_below, CALIBRATED.ideal_min):
        assert (float(shown) < threshold) == (score < threshold), composite.reason
    assert len(shown.split(".")[1]) >= 2, composite.reason


@pytest.mark.parametrize("profile", ["calibrated", "sdk-compat"])
def test_shared_labels_and_states_build_the_same_references(profile: str) -> None:
    """A leave-one-out cohort merges each donor into dozens of references; the donors' labels and
    states are now computed once and shared. The references and baselines must not change."""
    from agentlens.process.donor_baseline import donor_baseline
    from agentlens.process.pta import run_labels, run_states
    from agentlens.process.pta_io import reference_to_json
    from agentlens.process.reference import build_reference

    trajs = read_paths([BENCH / "trajectories" / "psf__requests-1724"]).trajectories
    donors = [t for t in trajs if t.outcome.status == "passed"][:7]
    config = get_profile(profile)
    labels = [run_labels(t, config) for t in donors]
    states = [run_states(t, lab, config) for t, lab in zip(donors, labels, strict=True)]
    fresh = build_reference(donors, config)
    for _ in range(2):  # shared states are merged twice: the first merge must not alter them
        shared = build_reference(donors, config, states=states)
        assert reference_to_json(shared) == reference_to_json(fresh)
    assert donor_baseline(donors, config, labels) == donor_baseline(donors, config)


@pytest.mark.parametrize(
    ("stages", "has_edit", "v_after"),
    [  # `has_edit`: an I step; `v_after`: a V step after the LAST I step (docs in calibrated.py)
        (["I", "V"], 1.0, 1.0),  # the only edit is the first labelled step
        (["E", "I", "V", "I"], 1.0, 0.0),
        (["E", None, "V"], 0.0, 0.0),
        (["V", "I", "E", "V"], 1.0, 1.0),
    ],
)
def test_edit_and_verification_features(
    scored: list[ProcessResult], stages: list[str | None], has_edit: float, v_after: float
) -> None:
    got = features(scored[0], stages, DonorBaseline(0.5, 0.5, 10.0, "test"))
    assert (got["has_edit"].value, got["v_after"].value) == (has_edit, v_after)


def test_the_weighted_term_shows_its_stage_weighted_sum(scored: list[ProcessResult]) -> None:
    """`weighted` entered the composite with a reason of no numbers ("stage-weighted coverage of
    the best path"): nothing to recompute 0.1500 from. Its reason now sums weight·matched over
    weight·states per best-path stage, the counts being the run's own."""
    term = r"(\d+(?:\.\d+)?)·(\d+) (\w)"
    for res in scored:
        reason = res.signals["weighted"].reason
        top, bottom, value = re.fullmatch(
            r".*: \((.*)\) / \((.*)\) = [\d.]+/[\d.]+ = ([\d.]+)", reason
        ).groups()  # type: ignore[union-attr]
        hits, totals = re.findall(term, top), re.findall(term, bottom)
        assert {s: int(n) for _, n, s in hits} == {
            s: res.stages.matched.get(s, 0) for s in res.stages.total
        }
        assert {s: int(n) for _, n, s in totals} == res.stages.total
        shown = sum(float(w) * int(n) for w, n, _ in hits) / sum(
            float(w) * int(n) for w, n, _ in totals
        )
        assert (
            float(value)
            == pytest.approx(shown, abs=5e-4)
            == pytest.approx(res.signals["weighted"].value, abs=5e-4)
        )


def test_the_f1_term_names_the_f1_it_uses(scored: list[ProcessResult]) -> None:
    """`f1_rel` printed "F1 0.242" beside struct's "F1 = 19.4" for the same run (psf__requests-1724
    gpt-4o fail): it takes the release's set-F1 (best-path recall and precision, greedy set
    matching), not struct's ordered F1, and said neither. It now shows that F1's recall and
    precision (the run's coverage_percent and precision_percent columns) and the difference."""
    number = r"(-?[\d.]+)"
    for res in scored:
        reason = res.signals["f1_rel"].reason
        found = re.match(
            rf"set-F1 2·{number}·{number}/\({number} \+ {number}\) = {number} \(best-path "
            rf"recall and precision, greedy set matching.*; donors' {number} .*; "
            rf"{number} − {number} = {number}$",
            reason,
        )
        assert found, reason
        recall, precision, _, _, f1, donors, _, _, diff = (float(g) for g in found.groups())
        assert recall == pytest.approx(res.coverage_percent / 100, abs=5e-4)
        assert precision == pytest.approx(res.precision_percent / 100, abs=5e-4)
        both = recall + precision
        assert f1 == pytest.approx(2 * recall * precision / both if both else 0, abs=1.5e-3)
        assert diff == pytest.approx(f1 - donors, abs=1.5e-3)
        assert diff == pytest.approx(res.signals["f1_rel"].value, abs=5e-4)


@pytest.mark.parametrize("name", [f for f in FEATURES if f != "div"])
def test_each_term_reason_ends_with_the_value_the_composite_uses(
    scored: list[ProcessResult], name: str
) -> None:
    """The composite prints each term's x; its reason must end with that x: `len_rel` ended at
    "ln((9+1)/(14.6+1))", `waste` at "0 wasted / 9", and `v_after`/`has_edit` read "none" for 0.
    (`div`'s value comes before the miss it names: test_the_divergence_signal_is_…)"""
    for res in scored:
        signal = res.signals[name]
        found = re.search(r"= (-?[\d.]+)$", signal.reason)
        assert found, signal.reason
        assert float(found.group(1)) == pytest.approx(signal.value, abs=5e-4), signal.reason


def test_an_incomplete_implementation_names_the_failing_verdict_it_needs(
    scored: list[ProcessResult],
) -> None:
    """C3 needs low I coverage AND a failing verdict (else C5); its reason said only
    "I coverage 0% < 50% → C3", so a reader could not tell it from a C5 with the same coverage."""
    found = [res for res in scored if res.mechanism and res.mechanism[0] == "C3"]
    assert found  # psf__requests-1724 has Incomplete Implementation passes
    for res in found:
        reason = res.mechanism[1]  # type: ignore[index]
        assert "with a failing verdict → C3" in reason and res.verdict in FAILING_VERDICTS, reason
        shown = re.match(r"I coverage ([\d.]+)% < 50%", reason)
        assert shown and float(shown.group(1)) < 50, reason


def test_a_reference_built_in_python_scores_as_the_command_built_one(tmp_path: Path) -> None:
    """`build_reference` + `score_trajectory` under `calibrated` fell back to the dev tasks' mean
    baseline ("this reference keeps no donor runs") while `agentlens reference build` kept the
    donors' own: the same donors gave 57.58 in Python and 66.34 from the command."""
    from agentlens.cli import main
    from agentlens.cli.reference_cmd import choose_donors
    from agentlens.process.pta_io import read_reference, reference_to_json
    from agentlens.process.reference import build_reference
    from agentlens.process.score import score_trajectory

    task = BENCH / "trajectories" / "psf__requests-1724"
    trajs = read_paths([task]).trajectories
    reference = build_reference(choose_donors(trajs, 5, 42), "calibrated")
    saved = tmp_path / "ref.json"
    assert main(["reference", "build", str(task), "-o", str(saved), "--k", "5"]) == 0
    from_file = read_reference(saved)
    assert reference_to_json(reference) == reference_to_json(from_file)
    for run in trajs[:5]:
        here, there = score_trajectory(run, reference), score_trajectory(run, from_file)
        assert here.score == pytest.approx(there.score)
        assert "mean of 5 donors each scored against the other 4" in here.signals["f1_rel"].reason


def test_a_reference_built_with_the_defaults_is_scored_with_the_defaults() -> None:
    """`build_reference` defaulted to `paper` and `score_trajectory` to `calibrated`: a reference
    built and scored with no profile named kept no donor baseline, as a file does."""
    from agentlens.process.reference import build_reference
    from agentlens.process.score import score_trajectory

    trajs = read_paths([BENCH / "trajectories" / "psf__requests-1724"]).trajectories
    donors = [t for t in trajs if t.outcome.status == "passed"][:5]
    reference = build_reference(donors)
    assert reference.profile == DEFAULT_PROFILE
    reason = score_trajectory(trajs[0], reference).signals["f1_rel"].reason
    assert "mean of 5 donors each scored against the other 4" in reason
