"""End to end on real runs: the 40 annotation columns, reasons with arithmetic, profiles, saved
references, and (when the released SDK is present) identical rows to the release for one task."""

from __future__ import annotations

import csv
import json

import pytest

from agentlens.process.pta_io import reference_from_json, reference_to_json
from agentlens.process.score import score_trajectory
from tests.conftest import BENCH
from tests.process.test_pta import SDK, TASK, bench_reference, bench_split, sdk_merged

HEADER = next(csv.reader((BENCH / "annotations" / "trajectories.csv").open()))


@pytest.fixture(scope="module")
def results():
    ref = bench_reference(TASK)
    return [score_trajectory(t, ref, "sdk-compat") for t in bench_split(TASK).scored]


def test_annotation_row_has_the_released_columns(results) -> None:
    for result in results:
        row = result.annotation_row()
        assert list(row) == HEADER
        assert 0 <= row["quality_score"] <= 100
        assert row["n_states"] == len(
            [s for s in bench_trajectory(result.trajectory_id).tool_steps]
        )


def bench_trajectory(traj_id: str):
    return next(t for t in bench_split(TASK).scored if t.id == traj_id)


def test_every_signal_shows_its_arithmetic(results) -> None:
    result = results[0]
    assert set(result.signals) == {"struct", "cov", "coh", "temp", "workflow", "stage_completeness"}
    assert "recall" in result.signals["struct"].reason and "/" in result.signals["cov"].reason
    assert "released score: round(" in result.composite.reason
    assert result.tier_reason.endswith(str(result.tier))
    assert all(w.reason for w in result.waste.values())


def test_paper_profile_never_reads_the_outcome() -> None:
    ref = bench_reference(TASK, "paper")
    traj = bench_split(TASK).scored[0]
    flipped = traj.__class__(**{**{f: getattr(traj, f) for f in traj.__struct_fields__}})
    flipped.outcome = traj.outcome.__class__(
        status="failed" if traj.outcome.status == "passed" else "passed"
    )
    a, b = score_trajectory(traj, ref, "paper"), score_trajectory(flipped, ref, "paper")
    assert a.score == b.score and a.signals["struct"].reason == b.signals["struct"].reason
    assert "Eq. 1" in a.composite.reason and "ordered recall" in a.signals["struct"].reason
    assert "all reference states" in a.signals["cov"].reason


def test_a_saved_reference_scores_the_same(tmp_path) -> None:
    ref = bench_reference(TASK)
    back = reference_from_json(json.loads(json.dumps(reference_to_json(ref))))
    for traj in bench_split(TASK).scored[:5]:
        assert (
            score_trajectory(traj, back, "sdk-compat").annotation_row()
            == score_trajectory(traj, ref, "sdk-compat").annotation_row()
        )


@pytest.mark.skipif(not (SDK / "src").is_dir(), reason="released SDK not present")
def test_rows_identical_to_the_released_sdk_on_one_task() -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from sdk_parity import plain_splits, released, same, sdk_modules

    mods = sdk_modules(SDK)
    assert mods is not None
    split = bench_split(TASK)
    split = split.__class__(split.task_id, split.donors, split.scored[:8])
    theirs = released(plain_splits([split]), mods)
    ref = bench_reference(TASK)
    for traj in split.scored:
        mine = score_trajectory(traj, ref, "sdk-compat").annotation_row()
        for column in HEADER:
            assert same(mine[column], theirs[traj.id][column]), (traj.id, column)


def test_paper_profile_scores_another_format_from_canonical_fields() -> None:
    """SWE-agent runs of one SWE-bench-java task, pass/fail from the dataset's labels.csv."""
    import msgspec

    from agentlens.formats import read_path
    from agentlens.process.reference import build_reference
    from agentlens.trajectory import Outcome
    from tests.conftest import DATA

    root = DATA / "swe-agent-java"
    labels = {r["local_path"]: r["label"] for r in csv.DictReader((root / "labels.csv").open())}
    runs = []
    for path in sorted(root.glob("*/trajs/fasterxml__jackson-databind-4486.traj")):
        status = "passed" if labels[str(path.relative_to(root))] == "pass" else "failed"
        runs.append(msgspec.structs.replace(read_path(path)[0], outcome=Outcome(status=status)))
    passing = [r for r in runs if r.outcome.status == "passed"]
    assert len(passing) >= 3
    ref = build_reference(passing[:3])
    assert len(ref.paths()) >= 1 and ref.branch_points()
    for run in runs:
        result = score_trajectory(run, ref, "paper")
        assert 0 <= result.score <= 100 and result.profile == "paper"
        tool_indices = {s.index for s in run.tool_steps}
        for finding in result.waste.values():
            assert all(set(i.steps) <= tool_indices for i in finding.instances)
        if run.outcome.status == "failed":
            assert result.tier in ("partial_fail", "off_track")
    donor = score_trajectory(passing[0], build_reference([passing[0]]), "paper")
    assert donor.signals["struct"].value == 100.0  # a run against its own reference


def test_a_run_without_tool_calls_still_scores() -> None:
    import msgspec

    traj = bench_split(TASK).scored[0]
    empty = msgspec.structs.replace(traj, steps=traj.steps[:1])
    for profile in ("sdk-compat", "paper"):
        result = score_trajectory(empty, bench_reference(TASK, profile), profile)
        assert result.n_states == 0 and result.total_wasted_steps == 0
        assert result.signals["coh"].value == 1.0  # Eq. 2 fallback: no transitions
        assert result.divergence.step == 2 and result.divergence.fraction is None
    assert result.score == 30.0  # paper: only 0.30·100·Φ_coh remains


def _max_matching(adj: list[list[int]]) -> int:
    """Kuhn's augmenting paths: size of a maximum matching, rows `adj[i]` → columns."""
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in adj[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return sum(augment(i, set()) for i in range(len(adj)))


def test_paper_struct_and_cov_recomputed_from_plain_verdicts() -> None:
    """Spec §7.2/§7.3 (paper): recompute Φ_struct (ordered recall by a forward scan over the best
    path, bipartite precision) and Φ_cov (all reference states, bipartite) from `eq.check` alone,
    without the engine's buckets, prefix reuse or scipy matching."""
    from agentlens.process.profiles import get_profile
    from agentlens.process.pta import equivalence_for, run_labels
    from agentlens.process.reference import build_reference
    from agentlens.process.states import states_from_trajectory

    cfg = get_profile("paper")
    ref = build_reference(bench_split(TASK).donors, cfg)
    eq = equivalence_for(cfg)
    for run in bench_split(TASK).scored[:6]:
        got = score_trajectory(run, ref, cfg)
        cand = states_from_trajectory(run, run_labels(run, cfg), use_raw=False)

        def adjacency(states: list, cand: list = cand) -> list[list[int]]:
            return [[j for j, c in enumerate(cand) if eq.check(s, c, 1)] for s in states]

        nodes = [n for n in ref.nodes.values() if not n.is_initial]
        cov = _max_matching(adjacency(nodes)) / len(nodes) * 100
        assert got.signals["cov"].value == pytest.approx(cov)

        path = [s for s in ref.paths(cfg.max_paths)[got.best_path_index] if not s.is_initial]
        found, pos = 0, 0
        for state in path:
            nxt = next((j for j in range(pos, len(cand)) if eq.check(state, cand[j], 1)), None)
            if nxt is not None:
                found, pos = found + 1, nxt + 1
        recall = found / len(path) * 100
        precision = _max_matching(adjacency(path)) / (len(cand) - 1) * 100
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        assert got.signals["struct"].value == pytest.approx(f1)


@pytest.mark.skipif(not (SDK / "src").is_dir(), reason="released SDK not present")
def test_canonical_strategy_scores_like_the_released_sdk() -> None:
    """Spec §6 `gt_strategy="canonical"`: same coverage and released score as the SDK's."""
    from agentlens.process.profiles import get_profile

    split = bench_split(TASK)
    merged = sdk_merged([d.source.path for d in split.donors])
    from swe_trace_sdk import match, trace

    config = get_profile("sdk-compat", gt_strategy="canonical")
    for run in split.scored[:8]:
        cand = trace.load(run.source.path, format="trace")
        result = match.run(cand, merged, use_llm=False, gt_strategy="canonical")
        passed = run.outcome.status == "passed"
        report = match.quality_assessment(result, cand, merged, passed=passed)
        mine = score_trajectory(run, bench_reference(TASK), config)
        assert mine.coverage_percent == pytest.approx(result.metrics.coverage_percent)
        assert mine.score == report.quality_score


@pytest.mark.parametrize(("score", "shown"), [(69.996, 69.996), (46.9951, 46.995), (55.123, 55.12)])
def test_annotation_score_stays_on_its_side_of_the_tier_thresholds(
    score: float, shown: float
) -> None:
    """Two decimals put 69.996 at 70.0, beside `quality_tier` solid (Ideal is ≥ 70)."""
    from dataclasses import replace

    from agentlens.process.signals import Signal

    result = score_trajectory(bench_split(TASK).scored[0], bench_reference(TASK, "paper"), "paper")
    moved = replace(result, composite=Signal("composite", score, ""))
    assert moved.annotation_row()["quality_score"] == shown


def test_labels_of_another_length_are_refused_naming_both_counts() -> None:
    from agentlens.errors import ConfigError
    from agentlens.process.labeler import label_trajectory
    from agentlens.process.reference import build_reference

    traj = bench_split(TASK).scored[0]
    ref = bench_reference(TASK, "paper")
    tool_stages = [s for s in label_trajectory(traj) if s is not None]  # one per tool step only
    with pytest.raises(
        ConfigError, match=rf"{len(tool_stages)} labels for {len(traj.steps)} steps"
    ):
        score_trajectory(traj, ref, "paper", labels=tool_stages)
    with pytest.raises(ConfigError, match="1 label lists for 2 runs"):
        build_reference([traj, traj], "paper", labels=[label_trajectory(traj)])
