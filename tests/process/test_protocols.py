"""Donor selection protocols on the real dev traces, checked against the spec's rule re-derived
here from the file names alone."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from agentlens.errors import ConfigError
from agentlens.formats.stream import read_paths
from agentlens.process.protocols import (
    agentlens_bench_split,
    group_by_task,
    leave_one_out_split,
    score_splits,
    split_cohort,
)
from agentlens.trajectory import Trajectory
from tests.conftest import BENCH

TRAJ = BENCH / "trajectories"


@pytest.fixture(scope="module")
def runs() -> list[Trajectory]:
    return read_paths([TRAJ]).trajectories


def expected_bench_donors(k: int = 5, seed: int = 42) -> dict[str, list[str]]:
    """Spec §14.1 from the directory listing: sorted tasks, file-name-sorted passing runs, one
    shared Random(seed); tasks with fewer than k passing runs are skipped without drawing."""
    rng = random.Random(seed)
    donors = {}
    for task_dir in sorted(p for p in TRAJ.iterdir() if p.is_dir()):
        passing = sorted(p.name for p in task_dir.glob("*.json") if "-pass-" in p.name)
        if len(passing) < k:
            continue
        rng.shuffle(passing)
        donors[task_dir.name] = [Path(n).stem for n in passing[:k]]
    return donors


def test_agentlens_bench_split_follows_the_spec(runs: list[Trajectory]) -> None:
    splits = split_cohort(runs, "agentlens-bench")
    want = expected_bench_donors()
    assert {s.task_id: [t.id for t in s.donors] for s in splits} == want
    assert "astropy__astropy-13236" not in want  # only 3 passing runs in the dev copy: skipped
    for split in splits:
        n_task = sum(1 for p in (TRAJ / split.task_id).glob("*.json"))
        assert len(split.scored) == n_task - 5
        assert not {t.id for t in split.donors} & {t.id for t in split.scored}
    assert split_cohort(runs, "agentlens-bench") == splits  # deterministic


def test_leave_one_out_never_scores_a_run_against_itself(runs: list[Trajectory]) -> None:
    groups = group_by_task(runs)
    astropy = {"astropy__astropy-13236": groups["astropy__astropy-13236"]}
    splits = leave_one_out_split(astropy)
    passing = [t for t in astropy["astropy__astropy-13236"] if t.outcome.status == "passed"]
    failing = [t for t in astropy["astropy__astropy-13236"] if t.outcome.status == "failed"]
    assert len(passing) == 3
    scored = [t.id for s in splits for t in s.scored]
    assert sorted(scored) == sorted(t.id for t in passing + failing)
    for split in splits:
        assert all(t.outcome.status == "passed" for t in split.donors)
        assert not {t.id for t in split.donors} & {t.id for t in split.scored}
        assert len(split.donors) == (3 if split.scored[0].outcome.status == "failed" else 2)


def test_leave_one_out_needs_two_other_passing_runs(runs: list[Trajectory]) -> None:
    task = "astropy__astropy-13236"
    group = group_by_task(runs)[task]
    passing = [t for t in group if t.outcome.status == "passed"][:2]
    failing = [t for t in group if t.outcome.status == "failed"][:3]
    splits = leave_one_out_split({task: passing + failing})
    # each passing run has only one other passing run, so only the failing runs are scored
    assert sorted(t.id for s in splits for t in s.scored) == sorted(t.id for t in failing)


def test_leave_one_out_with_k_caps_the_donors(runs: list[Trajectory]) -> None:
    splits = leave_one_out_split(group_by_task(runs), k=3)
    assert splits and all(2 <= len(s.donors) <= 3 for s in splits)
    assert sum(len(s.donors) == 3 for s in splits) > sum(len(s.donors) == 2 for s in splits)


def test_unknown_protocol(runs: list[Trajectory]) -> None:
    with pytest.raises(ConfigError):
        split_cohort(runs[:3], "k-fold")


def test_score_splits_scores_exactly_the_scored_runs(runs: list[Trajectory]) -> None:
    split = agentlens_bench_split(group_by_task(runs))[0]
    small = type(split)(split.task_id, split.donors[:2], split.scored[:3])
    seen = []
    results = score_splits([small], "sdk-compat", on_split=seen.append)
    assert [r.trajectory_id for r in results] == [t.id for t in small.scored]
    assert seen == [small]
