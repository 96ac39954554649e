"""A spilled cohort's splits, made a task at a time and kept as positions (issue 25).

The runs of a cohort wait in spill files, their refs in a table beside them
(`formats.run_table`), which groups them by task. A task's refs are made when the protocol comes
to that task, and its splits keep the positions of their runs (4 bytes a run), so that no object
per run of the cohort exists at once. The splits and the tasks left unscored are those
`split_cohort` and `unscored_tasks` give on the same runs.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping, Sequence

from agentlens.formats.run_spill import RunRef, RunSpill
from agentlens.process.protocol_notes import scored_by_task, unscored_in
from agentlens.process.protocols import iter_splits
from agentlens.process.run_units import TaskSplit


class TaskRuns(Mapping[str, list[RunRef]]):
    """The runs kept in `spill`, by task (`task_key`), each task's refs made when asked for."""

    def __init__(self, spill: RunSpill) -> None:
        self.table = spill.table
        self.names = self.table.tasks()

    def __getitem__(self, task: str) -> list[RunRef]:
        refs = self.table.task_refs(task)
        if not refs:
            raise KeyError(task)
        return refs

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


def spilled_splits(
    spill: RunSpill, protocol: str, *, k: int | None, seed: int
) -> tuple[list[TaskSplit[int]], list[str]]:
    """The protocol's splits of the spilled runs, by position, and the tasks it leaves out."""
    groups = TaskRuns(spill)
    splits = [
        TaskSplit(s.task_id, _positions(s.donors), _positions(s.scored))
        for s in iter_splits(groups, protocol, k=k, seed=seed)
    ]
    return splits, unscored_in(groups, scored_by_task(splits, protocol), _position)


def _position(ref: RunRef) -> int:
    return ref.position


def _positions(refs: Sequence[RunRef]) -> array[int]:
    return array("I", (r.position for r in refs))
