"""Evaluation protocols shared by the engine's benchmarks and the cohort tools.

`agentlens_bench_split`: the AgentLens-Bench protocol (spec §14.1) — tasks in sorted order; per
task, the file-name-sorted passing runs are shuffled by ONE `random.Random(seed)` shared across
tasks; the first k are the reference donors, every other run of the task is scored. Tasks with
fewer than k passing runs are skipped and consume no random numbers.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentlens.trajectory import Trajectory


@dataclass(frozen=True)
class TaskSplit:
    task_id: str
    donors: list[Trajectory]
    scored: list[Trajectory]


def _source_name(traj: Trajectory) -> str:
    return traj.source.path.rsplit("/", 1)[-1] or traj.id


def agentlens_bench_split(
    trajs_by_task: Mapping[str, Sequence[Trajectory]], k: int = 5, seed: int = 42
) -> list[TaskSplit]:
    rng = random.Random(seed)
    splits = []
    for task in sorted(trajs_by_task):
        runs = sorted(trajs_by_task[task], key=_source_name)
        passing = [t for t in runs if t.outcome.status == "passed"]
        if len(passing) < k:
            continue
        shuffled = passing.copy()
        rng.shuffle(shuffled)
        donors = shuffled[:k]
        donor_ids = {id(t) for t in donors}
        scored = [t for t in passing if id(t) not in donor_ids]
        scored += [t for t in runs if t.outcome.status != "passed"]
        splits.append(TaskSplit(task, donors, scored))
    return splits
