"""What a cohort protocol needs of a task, and which tasks of a batch it could not score.

Leave-one-out scores a run against a reference built from OTHER passing runs of its task, and a
reference needs two donors: a failing run is scored when its task has 2 passing runs, a passing
run when its task has 3 (itself and two others). A task with exactly two passing runs and no
failing run therefore yields nothing. AgentLens-Bench takes k passing runs as donors and scores
the rest, so a task needs k passing runs and at least one more run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentlens.process.protocols import TaskSplit, group_by_task
from agentlens.process.run_units import CohortRun


def protocol_rule(protocol: str, k: int | None = None) -> str:
    if protocol == "leave-one-out":
        return (
            "each scored run needs two OTHER passing runs of its task (a failing run: 2 passing "
            "runs of its task; a passing run: 3, itself and two others)"
        )
    donors = k or 5
    return f"a task needs {donors} passing runs (the reference donors) and at least one run more"


def unscored_tasks(
    trajs: Sequence[CohortRun], splits: Sequence[TaskSplit[Any]], protocol: str = "leave-one-out"
) -> list[str]:
    """`task: N passing, M failing, U unknown` for each task with a run no split scores. Under
    AgentLens-Bench the donors are never scored, by design: a task is named only for the others."""
    scored = {id(t) for split in splits for t in split.scored}
    if protocol == "agentlens-bench":
        scored |= {id(t) for split in splits for t in split.donors}
    lines = []
    for task, runs in sorted(group_by_task(trajs).items()):
        if all(id(t) in scored for t in runs):
            continue
        counts = [sum(t.outcome.status == s for t in runs) for s in ("passed", "failed")]
        unknown = len(runs) - sum(counts)
        left = len([t for t in runs if id(t) not in scored])
        lines.append(
            f"{task}: {counts[0]} passing, {counts[1]} failing, {unknown} unknown "
            f"({left} of {len(runs)} runs not scored)"
        )
    return lines
