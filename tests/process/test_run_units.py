"""A task unit merges each donor set once (a split's reference and its baseline's references
share donor sets across splits) and scores exactly as merging each split afresh does."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import pytest

from agentlens.formats.stream import read_paths
from agentlens.process import pta, run_units
from agentlens.process.profiles import Profile, get_profile
from agentlens.process.protocols import _unit as unit_of
from agentlens.process.protocols import split_cohort, task_groups
from agentlens.process.reference import build_reference
from agentlens.process.run_units import TaskUnit, score_unit
from agentlens.process.score import score_trajectory
from agentlens.process.states import ProcState
from agentlens.trajectory import Trajectory
from tests.conftest import BENCH


@cache
def requests_runs() -> list[Trajectory]:
    """Seven passing runs and two failing ones of one task: a leave-one-out cohort of 8 splits."""
    trajs = read_paths([BENCH / "trajectories" / "psf__requests-1724"]).trajectories
    passing = [t for t in trajs if t.outcome.status == "passed"][:7]
    return passing + [t for t in trajs if t.outcome.status == "failed"][:2]


def leave_one_out_unit() -> TaskUnit:
    (group,) = task_groups(split_cohort(requests_runs(), "leave-one-out"))
    return unit_of(group)


def counting_merges(monkeypatch: pytest.MonkeyPatch) -> tuple[list[tuple[str, ...]], list[int]]:
    """The donors of each reference finished, and one item per run added to a merge."""
    finished: list[tuple[str, ...]] = []
    added: list[int] = []
    real_reference, real_add = pta.PartialMerge.reference, pta.PartialMerge.add

    def reference(self: pta.PartialMerge, trajs: Sequence[Trajectory]) -> pta.Reference:
        finished.append(tuple(t.id for t in trajs))
        return real_reference(self, trajs)

    def add(self: pta.PartialMerge, run: list[ProcState]) -> None:
        added.append(1)
        real_add(self, run)

    monkeypatch.setattr(pta.PartialMerge, "reference", reference)
    monkeypatch.setattr(pta.PartialMerge, "add", add)
    return finished, added


@pytest.mark.parametrize("profile", ["calibrated", "paper", "sdk-compat"])
def test_each_donor_set_is_merged_once_and_scores_as_a_fresh_merge(
    monkeypatch: pytest.MonkeyPatch, profile: Profile
) -> None:
    unit = leave_one_out_unit()
    config = get_profile(profile)
    fresh = []
    for donors, scored in unit.splits:
        reference = build_reference([unit.runs[i] for i in donors], config)
        fresh += [score_trajectory(unit.runs[i], reference, config) for i in scored]
    finished, added = counting_merges(monkeypatch)
    assert score_unit(unit, profile) == fresh
    assert len(finished) == len(set(finished))
    # the runs each donor set adds after its first, were none merged once for sets alike
    assert len(added) < sum(len(donors) - 1 for donors in set(finished))
    if profile == "calibrated":  # 8 splits' own sets and their baselines' 5 each, shared
        assert len(finished) < len(unit.splits) * 6


@pytest.mark.parametrize("budget", [0, 300])
def test_partial_merges_past_their_budget_merge_from_what_is_kept(
    monkeypatch: pytest.MonkeyPatch, budget: int
) -> None:
    """With no room for first runs merged before (or room for a few), every donor set merges
    from its first run or from shorter first runs, to the same scores."""
    unit = leave_one_out_unit()
    kept = score_unit(unit, "calibrated")
    monkeypatch.setattr(run_units, "PARTIAL_STATES", budget)
    finished, added = counting_merges(monkeypatch)
    assert score_unit(unit, "calibrated") == kept
    merged_whole = sum(len(donors) - 1 for donors in set(finished))
    assert len(added) == merged_whole if budget == 0 else len(added) < merged_whole
