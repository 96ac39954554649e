"""The setup check of a run-vs-run comparison (spec §11.2 "Setup"): the two runs must cover the
same task points (each task the same number of times) and, when both were judged, by the same
judge; otherwise the comparison is not like for like and the check alerts, as the released
data-conformity check does."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from agentlens.list_text import counted, first_few
from agentlens.reviews.compare import Check
from agentlens.trajectory import Trajectory


def task_points(trajs: Iterable[Trajectory]) -> Counter[str]:
    """How many trajectories each task has (the task id, else the trajectory id)."""
    return Counter(t.task_id or t.id for t in trajs)


def setup_check(
    points_1: Counter[str],
    points_2: Counter[str],
    judge_1: str | None = None,
    judge_2: str | None = None,
) -> Check:
    """Alert when the task points or the judges differ; the reason lists what differs."""
    errors = []
    only_1, only_2 = points_1 - points_2, points_2 - points_1
    if only_1:
        errors.append(f"{counted(sum(only_1.values()), 'point')} only in run 1: {_names(only_1)}")
    if only_2:
        errors.append(f"{counted(sum(only_2.values()), 'point')} only in run 2: {_names(only_2)}")
    if judge_1 and judge_2 and judge_1 != judge_2:
        errors.append(f"judges differ: {judge_1} vs {judge_2}")
    total_1, total_2 = sum(points_1.values()), sum(points_2.values())
    same = f"same {counted(len(points_1), 'task')}, {counted(total_1, 'trajectory')} each"
    reason = "; ".join(errors) or same
    return Check(
        "setup", "conformity", total_1, total_2, None, None, bool(errors), bool(errors), reason
    )


def _names(points: Counter[str], limit: int = 5) -> str:
    names = [f"{task}×{n}" if n > 1 else task for task, n in sorted(points.items())]
    return first_few(names, limit)
