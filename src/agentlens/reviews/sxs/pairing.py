"""Pair the trajectories of two runs for side-by-side review, losslessly.

A run may hold several trajectories of one task (repeats, or one per persona). Each run's
trajectories of a task are sorted by trajectory id; repeat i of run A is paired with repeat i of
run B. The pair key is the task id, or `task#i` (i from 0) when either run has repeats of the
task. Trajectories without a partner (a task missing from the other run, or surplus repeats) are
listed, never silently dropped."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentlens.reviews.judge.judge import TrajectoryReview
    from agentlens.trajectory import Trajectory

PAIRINGS = ("repeat", "task-mean")
"""`repeat`: every pair is one paired difference in the permutation test. `task-mean`: the pair
scores of a task are averaged first, one paired difference per task."""


def task_key(traj: Trajectory) -> str:
    return traj.task_id or traj.id


def pair_task(key: str) -> str:
    """The task of a pair key (`task#3` → `task`)."""
    task, sep, index = key.rpartition("#")
    return task if sep and index.isdigit() else key


def key_order(key: str) -> tuple[str, int]:
    """Sort order of pair keys: by task, then numerically by repeat (`t#2` before `t#10`)."""
    task, sep, index = key.rpartition("#")
    if sep and index.isdigit():
        return task, int(index)
    return key, -1


@dataclass
class Side:
    """One run: its trajectories and single-run reviews, keyed by pair key."""

    trajectories: dict[str, Trajectory]
    reviews: dict[str, TrajectoryReview]


@dataclass
class Pairing:
    """The pairs of two runs and what could not be paired (ids per run)."""

    a: Side
    b: Side
    unpaired_a: list[str] = field(default_factory=list)
    unpaired_b: list[str] = field(default_factory=list)

    @property
    def keys(self) -> list[str]:
        return sorted(set(self.a.trajectories) & set(self.b.trajectories), key=key_order)

    def to_dict(self) -> dict[str, Any]:
        keys = self.keys
        return {
            "rule": "repeat i of run A vs repeat i of run B, repeats sorted by trajectory id",
            "pairs": len(keys),
            "tasks": len({pair_task(k) for k in keys}),
            "tasks_with_repeats": len({pair_task(k) for k in keys if "#" in k}),
            "unpaired_a": len(self.unpaired_a),
            "unpaired_b": len(self.unpaired_b),
            "unpaired_a_ids": self.unpaired_a,
            "unpaired_b_ids": self.unpaired_b,
        }


def _by_task(trajs: Iterable[Trajectory]) -> dict[str, list[Trajectory]]:
    groups: dict[str, list[Trajectory]] = defaultdict(list)
    for traj in trajs:
        groups[task_key(traj)].append(traj)
    return {task: sorted(runs, key=lambda t: t.id) for task, runs in groups.items()}


def pair_runs(
    trajs_a: Sequence[Trajectory],
    trajs_b: Sequence[Trajectory],
    reviews_a: Sequence[TrajectoryReview] = (),
    reviews_b: Sequence[TrajectoryReview] = (),
) -> Pairing:
    """Pair repeat i of each task in A with repeat i in B; attach each side's reviews by id."""
    groups_a, groups_b = _by_task(trajs_a), _by_task(trajs_b)
    a: dict[str, Trajectory] = {}
    b: dict[str, Trajectory] = {}
    unpaired_a: list[str] = []
    unpaired_b: list[str] = []
    for task in sorted(set(groups_a) | set(groups_b)):
        runs_a, runs_b = groups_a.get(task, []), groups_b.get(task, [])
        repeats = max(len(runs_a), len(runs_b)) > 1
        n = min(len(runs_a), len(runs_b))
        for i in range(n):
            key = f"{task}#{i}" if repeats else task
            a[key], b[key] = runs_a[i], runs_b[i]
        unpaired_a += [t.id for t in runs_a[n:]]
        unpaired_b += [t.id for t in runs_b[n:]]
    return Pairing(
        Side(a, _reviews_by_key(a, reviews_a)),
        Side(b, _reviews_by_key(b, reviews_b)),
        unpaired_a,
        unpaired_b,
    )


def _reviews_by_key(
    trajs: dict[str, Trajectory], reviews: Sequence[TrajectoryReview]
) -> dict[str, TrajectoryReview]:
    by_id = {r.trajectory_id: r for r in reviews}
    return {key: by_id[t.id] for key, t in trajs.items() if t.id in by_id}
