"""Waste is localised (spec §10): each finding's instances name the wasted steps, and the stored
`waste` metric's reason says where they are and adds them up, as every other metric does."""

from __future__ import annotations

import pytest

from agentlens.formats.stream import read_paths
from agentlens.process.protocols import score_splits, split_cohort
from agentlens.process.records import process_metrics
from agentlens.process.result import ProcessResult
from agentlens.trajectory import Trajectory
from tests.conftest import BENCH

TASK = BENCH / "trajectories" / "psf__requests-1724"


@pytest.fixture(scope="module")
def scored() -> list[tuple[Trajectory, ProcessResult]]:
    trajs = read_paths([TASK]).trajectories
    by_id = {t.id: t for t in trajs}
    results = score_splits(split_cohort(trajs, "agentlens-bench", k=5, seed=42))
    return [(by_id[r.trajectory_id], r) for r in results]


def test_every_wasted_step_is_named_in_the_json(
    scored: list[tuple[Trajectory, ProcessResult]],
) -> None:
    kinds = {k for _, r in scored for k, w in r.waste.items() if w.wasted_steps}
    assert len(kinds) >= 3  # real findings of several kinds, not an empty check
    for traj, res in scored:
        for kind, found in res.to_dict()["waste"].items():  # type: ignore[union-attr]
            steps = [s for instance in found["instances"] for s in instance["steps"]]
            assert len(steps) == found["steps"] == res.waste[kind].wasted_steps
            assert all(traj.steps[s].kind == "tool" for s in steps), (traj.id, kind, steps)
            assert found["reason"] == res.waste[kind].reason


def test_the_waste_metric_reason_says_where_and_adds_up(
    scored: list[tuple[Trajectory, ProcessResult]],
) -> None:
    for _, res in scored:
        metric = next(m for m in process_metrics(res) if m.name == "waste")
        assert metric.value == res.total_wasted_steps
        if not res.total_wasted_steps:
            assert metric.reason == "no wasted step"
            continue
        terms = [
            f"{kind} {w.wasted_steps} (steps {', '.join(str(s) for i in w.instances for s in i.steps)})"
            for kind, w in res.waste.items()
            if w.wasted_steps
        ]
        assert metric.reason == f"{' + '.join(terms)} = {res.total_wasted_steps}"


def test_per_kind_tokens_and_the_wasted_tokens_name_their_rules(
    scored: list[tuple[Trajectory, ProcessResult]],
) -> None:
    """psf__requests-1724 gpt-4o-fail: every per-kind reason said "0 tokens" while
    `annotation.wasted_input_tokens` was 24,892: the SDK's redundant rule finds 2 steps the
    detectors' rule does not. Each side now names the rule it follows."""
    (res,) = [r for _, r in scored if "gpt-4o-fail-25018754982" in r.trajectory_id]
    doc = res.to_dict()
    assert res.total_wasted_steps == 0
    assert doc["annotation"]["wasted_input_tokens"] == 24892  # type: ignore[index]
    for kind, found in doc["waste"].items():  # type: ignore[union-attr]
        assert found["reason"].endswith(
            f"0 tokens by the detector's rule (`{kind}_waste`), not the SDK's of `wasted_tokens`"
        )
    wasted = doc["wasted_tokens"]
    assert (wasted["input"], wasted["output"]) == (24892, 147)  # type: ignore[index]
    assert wasted["reason"].startswith(  # type: ignore[index]
        "the release SDK's inefficiency rules, not the detectors' of `waste`: "
    )
    assert wasted["reason"].endswith("= 2 steps: 24,892 input + 147 output tokens")  # type: ignore[index]
