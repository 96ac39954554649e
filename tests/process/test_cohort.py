"""Cohort tables on the release's own dev annotation rows, against values computed here from the
raw CSV text with the csv module alone."""

from __future__ import annotations

import csv
import itertools
import json
from collections import defaultdict

import pytest

from agentlens.process import cohort
from tests.conftest import BENCH

CSV = BENCH / "annotations" / "trajectories.csv"


@pytest.fixture(scope="module")
def raw() -> list[dict[str, str]]:
    with CSV.open() as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def rows() -> list[dict[str, object]]:
    return cohort.read_annotation_rows(CSV)


def test_rows_are_typed(rows: list[dict[str, object]], raw: list[dict[str, str]]) -> None:
    assert len(rows) == len(raw) == 399
    first = rows[0]
    assert isinstance(first["passed"], bool) and isinstance(first["n_states"], int)
    assert isinstance(first["coherence_score"], float) and isinstance(first["model"], str)
    assert len(first) == 40


def test_model_table(rows: list[dict[str, object]], raw: list[dict[str, str]]) -> None:
    by_model: dict[str, list[dict[str, str]]] = defaultdict(list)
    for r in raw:
        by_model[r["model"]].append(r)
    want = {}
    for model, rs in by_model.items():
        ps = [r for r in rs if r["passed"] == "True"]
        mean = sum(float(r["quality_score"]) for r in ps) / len(ps)
        lucky = sum(r["quality_tier"] == "lucky" for r in ps)
        want[model] = (len(rs), len(ps), mean, lucky)
    rate = {m: want[m][1] / want[m][0] for m in want}  # gemini-2.5-pro and gpt-5.3-codex: 27/55
    by_score = sorted(want, key=lambda m: -want[m][2])
    table = cohort.model_table(rows)
    assert [t.model for t in table] == by_score
    for t in table:
        n, n_pass, mean, lucky = want[t.model]
        assert (t.trajectories, t.passing, t.lucky) == (n, n_pass, lucky)
        assert t.mean_score_passing == pytest.approx(mean)
        assert t.pass_rank == 1 + sum(r > rate[t.model] for r in rate.values())
        assert t.rank_shift == t.pass_rank - t.score_rank
        assert t.lucky_percent == pytest.approx(100 * lucky / n_pass)


def test_waste_tables(rows: list[dict[str, object]], raw: list[dict[str, str]]) -> None:
    passing = [r for r in raw if r["passed"] == "True"]
    failing = [r for r in raw if r["passed"] == "False"]
    table = {
        w.kind: w
        for w in cohort.waste_table(
            [r for r in rows if r["passed"]], [r for r in rows if not r["passed"]]
        )
    }
    for kind in cohort.WASTE_KINDS:
        hit_p = [r for r in passing if int(r[f"{kind}_count"]) > 0]
        hit_f = [r for r in failing if int(r[f"{kind}_count"]) > 0]
        row = table[kind]
        assert row.prevalence_a == pytest.approx(100 * len(hit_p) / len(passing))
        assert row.prevalence_b == pytest.approx(100 * len(hit_f) / len(failing))
        assert row.waste_b == pytest.approx(
            sum(int(r[f"{kind}_waste"]) for r in hit_f) / len(hit_f)
        )
        assert row.ratio == pytest.approx(row.prevalence_b / row.prevalence_a)


def test_mechanisms_cover_every_lucky_pass(
    rows: list[dict[str, object]], raw: list[dict[str, str]]
) -> None:
    lucky = [r for r in raw if r["passed"] == "True" and r["quality_tier"] == "lucky"]
    table = cohort.mechanism_table(rows)
    assert sum(sum(c.values()) for c in table.values()) == len(lucky)
    c1 = [
        r
        for r in lucky
        if int(r["n_states"]) <= 8
        and int(r["total_wasted_steps"]) == 0
        and float(r["stage_coverage_V"]) == 0
    ]
    assert cohort.c1_count(rows) == len(c1) > 0
    c3 = [
        r
        for r in lucky
        if r not in c1
        and int(r["total_wasted_steps"]) < 5
        and int(r["n_states"]) < 40
        and "incomplete_implementation"
        in {x["reason"] for x in json.loads(r["failure_reasons"] or "[]")}
    ]
    assert sum(c["C3"] for c in table.values()) == len(c3)


def test_separation_and_process_only(
    rows: list[dict[str, object]], raw: list[dict[str, str]]
) -> None:
    seps = {
        s.signal: s
        for s in cohort.separation_table(rows, ("cov", "composite", "process_only"), n_boot=200)
    }

    def brute(column: str, leak: float) -> float:
        pos = [float(r[column]) - leak for r in raw if r["passed"] == "True"]
        neg = [float(r[column]) for r in raw if r["passed"] == "False"]
        wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p, n in itertools.product(pos, neg))
        return wins / (len(pos) * len(neg))

    assert seps["cov"].auroc == pytest.approx(brute("coverage_percent", 0))
    assert seps["composite"].auroc == pytest.approx(brute("quality_score", 0))
    assert seps["process_only"].auroc == pytest.approx(brute("quality_score", 10))
    assert seps["process_only"].auroc < seps["composite"].auroc


def test_tiers(rows: list[dict[str, object]], raw: list[dict[str, str]]) -> None:
    counts = cohort.tiers(rows)
    assert sum(counts.values()) == len(raw)
    assert counts["lucky"] == sum(r["quality_tier"] == "lucky" for r in raw)


def _raw_tokens(trajectory_id: str, task: str) -> int:
    """Σ input + output tokens over the tool-call states of the raw trace JSON (spec §13.6)."""
    doc = json.loads((BENCH / "trajectories" / task / f"{trajectory_id}.json").read_bytes())
    return sum(
        (s.get("metadata") or {}).get("input_tokens", 0)
        + (s.get("metadata") or {}).get("output_tokens", 0)
        for s in doc["states"].values()
        if s.get("log_entry")
    )


def test_mechanism_profiles_tables_13_17_21(
    rows: list[dict[str, object]], raw: list[dict[str, str]]
) -> None:
    """Per category: mean waste, severity, zero-waste %, length, V = 0 / V > 0, tokens; expected
    values from the CSV text and the raw trace JSON."""
    with_tokens = [
        r | {"tokens": _raw_tokens(str(r["trajectory_id"]), str(r["task_id"]))} for r in rows
    ]
    profiles = {p.mechanism: p for p in cohort.mechanism_profiles(with_tokens)}
    lucky = {
        r["trajectory_id"]: r for r in raw if r["passed"] == "True" and r["quality_tier"] == "lucky"
    }
    assert sum(p.n for p in profiles.values()) == len(lucky)
    c1 = [
        r
        for r in lucky.values()
        if int(r["n_states"]) <= 8
        and int(r["total_wasted_steps"]) == 0
        and float(r["stage_coverage_V"]) == 0
    ]
    p1 = profiles["C1"]
    assert (p1.n, p1.mean_waste, p1.zero_waste_percent, p1.v_zero, p1.v_positive) == (
        len(c1),
        0.0,
        100.0,
        len(c1),
        0,
    )
    assert p1.mean_length == pytest.approx(sum(int(r["n_states"]) for r in c1) / len(c1))
    tokens = [_raw_tokens(r["trajectory_id"], r["task_id"]) for r in c1]
    assert p1.mean_tokens == pytest.approx(sum(tokens) / len(tokens))
    assert (p1.min_tokens, p1.max_tokens) == (min(tokens), max(tokens))
    c2 = [r for r in lucky.values() if r not in c1 and int(r["total_wasted_steps"]) >= 5]
    p2 = profiles["C2"]
    assert p2.n == len(c2) and p2.zero_waste_percent == 0.0
    assert p2.mean_severity == pytest.approx(sum(float(r["waste_severity"]) for r in c2) / len(c2))
    # C1's mean waste is 0 however it is averaged: C2's shows the division
    assert len(c2) > 1
    assert p2.mean_waste == pytest.approx(sum(int(r["total_wasted_steps"]) for r in c2) / len(c2))
    assert p2.mean_length == pytest.approx(sum(int(r["n_states"]) for r in c2) / len(c2))
    assert p2.v_zero == sum(float(r["stage_coverage_V"]) == 0 for r in c2)
    # the release's CSV has no token column: the token cells stay empty
    assert cohort.mechanism_profiles(rows)[0].mean_tokens is None


@pytest.mark.parametrize(
    ("trajectory_id", "states", "tokens"),
    [  # the paper's case studies (spec §13.6, tokens verified on the released data)
        ("psf__requests-1724-logs-gpt-5.3-codex-pass-25000713727_pta", 6, 64_314),
        ("matplotlib__matplotlib-22719-logs-gpt-5.2-codex-pass-24976719509_pta", 18, 235_346),
        ("django__django-11066-logs-gpt-4.1-pass-24926062288_pta", 100, 2_620_266),
    ],
)
def test_scored_rows_carry_the_papers_token_count(
    trajectory_id: str, states: int, tokens: int
) -> None:
    from agentlens.formats import read_path
    from agentlens.process.reference import build_reference
    from agentlens.process.score import score_trajectory

    task = trajectory_id.split("-logs-")[0]
    (run,) = read_path(BENCH / "trajectories" / task / f"{trajectory_id}.json")
    result = score_trajectory(run, build_reference([run, run]), "paper")
    row = cohort.result_row(result)
    assert (row["n_states"], row["tokens"]) == (states, tokens)


def test_unknown_outcomes_are_neither_passing_nor_failing() -> None:
    """Spec §13.1 ("8 unrecorded" are left out): a run without a recorded outcome is scored but
    counts in no pass/fail table and no AUROC."""
    import msgspec

    from agentlens.process.score import score_trajectory
    from tests.process.test_pta import TASK, bench_reference, bench_split

    runs = list(bench_split(TASK).scored)
    failed = [t for t in runs if t.outcome.status == "failed"]
    passed = [t for t in runs if t.outcome.status == "passed"]
    unknown = msgspec.structs.replace(
        failed[0], outcome=msgspec.structs.replace(failed[0].outcome, status="unknown")
    )
    ref = bench_reference(TASK, "paper")
    scored = [score_trajectory(t, ref, "paper") for t in [*passed, *failed[1:], unknown]]
    rows = [cohort.result_row(r) for r in scored]
    report = cohort.cohort_report(rows, n_boot=20)
    assert {(s.n_pass, s.n_fail) for s in report.separation} == {(len(passed), len(failed) - 1)}
    known = [r for r in rows if r["outcome"] != "unknown"]
    want = cohort.waste_table(
        [r for r in known if r["passed"]], [r for r in known if not r["passed"]]
    )
    assert repr(report.waste_pass_fail) == repr(want)  # repr: NaN-safe comparison
    assert sum(report.tiers.values()) == len(rows) - 1


def test_process_only_removes_exactly_the_outcome_points_the_score_got() -> None:
    """Spec §8.2: `process_only` is the released score without its outcome term — 10 for a pass
    by default, nothing when the term is switched off (it used to subtract 10 regardless)."""
    from agentlens.process.profiles import get_profile
    from agentlens.process.score import score_trajectory
    from tests.process.test_pta import TASK, bench_reference, bench_split

    run = next(t for t in bench_split(TASK).scored if t.outcome.status == "passed")
    ref = bench_reference(TASK)
    on = cohort.result_row(score_trajectory(run, ref, "sdk-compat"))
    off_cfg = get_profile("sdk-compat", include_outcome=False)
    off = cohort.result_row(score_trajectory(run, ref, off_cfg))
    assert cohort.signal(on, "process_only") == cohort.signal(on, "composite") - 10
    assert cohort.signal(off, "process_only") == cohort.signal(off, "composite")
    assert cohort.signal(on, "composite") - cohort.signal(off, "composite") in (9, 10, 11)


def test_tied_pass_rates_share_a_rank(rows: list[dict[str, object]]) -> None:
    """psf__requests-1724: five models pass every run; a model's name does not rank it below the
    others (that made a rank shift of +4 out of nothing)."""
    table = {t.model: t for t in cohort.model_table(_task_rows(rows, "psf__requests-1724"))}
    perfect = [t for t in table.values() if t.pass_rate == 100.0]
    assert len(perfect) == 5
    assert {t.pass_rank for t in perfect} == {1}
    assert table["sonnet-4.5"].pass_rank == 6  # 4 of 5: five models did better
    for t in table.values():
        assert t.rank_shift == t.pass_rank - t.score_rank  # type: ignore[operator]


def test_model_without_pass_fail_labels_is_not_ranked(rows: list[dict[str, object]]) -> None:
    """A model whose runs were never evaluated has no pass rate and no passing run: no rank and
    no shift, rather than the last place and a shift measured from it."""
    task = _task_rows(rows, "psf__requests-1724")
    for row in task:
        if row["model"] == "gpt-4o":
            row["outcome"], row["passed"] = "unknown", None  # as a scored unknown run's row
    table = {t.model: t for t in cohort.model_table(task)}
    unranked = table["gpt-4o"]
    assert (unranked.pass_rank, unranked.score_rank, unranked.rank_shift) == (None, None, None)
    ranked = [t.pass_rank for t in table.values() if t.model != "gpt-4o"]
    assert None not in ranked and max(ranked) <= len(table) - 1  # type: ignore[type-var]


def _task_rows(rows: list[dict[str, object]], task: str) -> list[dict[str, object]]:
    return [dict(r) for r in rows if r["task_id"] == task]
