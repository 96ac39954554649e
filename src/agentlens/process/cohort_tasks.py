"""A cohort's results gathered task by task as the work units finish: each unit's results
become cohort rows (and, with a store, records saved a task at a time) as soon as it arrives,
and the results themselves are dropped; the rows go to a `RowTable` (whole to a file, the
columns the tables read in memory)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from agentlens.process.cohort_rows import result_row
from agentlens.process.cohort_table import KEPT, Rows, RowTable
from agentlens.process.run_units import RunFailure

if TYPE_CHECKING:
    from agentlens.engine.outcome import Failure, Outcome
    from agentlens.process.cohort_runs import RunSpill
    from agentlens.process.profiles import Profile
    from agentlens.process.protocols import TaskSplit
    from agentlens.process.result import ProcessResult
    from agentlens.seams import Engine
    from agentlens.trajectory import Trajectory

SaveTask = Callable[[list["Trajectory"], list["ProcessResult"]], None]


class TaskRows:
    """Per work unit (`_pieces`): its task, the indices of its rows in `table`, its failed runs."""

    def __init__(
        self,
        splits: Sequence[TaskSplit[Any]],
        spill: RunSpill | None,
        save: SaveTask | None = None,
        columns: Sequence[str] = KEPT,
    ) -> None:
        self.splits = splits
        self.spill = spill
        self.save = save
        self.table = RowTable(columns)
        self._pieces: dict[int, tuple[int, range, list[RunFailure]]] = {}
        self._failed: dict[int, Failure] = {}

    def score(self, profile: Profile, engine: Engine | None, advance: Callable[[], None]) -> None:
        from agentlens.process.protocols import score_tasks

        # whole results travel back only to be saved; rows are a tenth of the bytes
        outcomes = score_tasks(self.splits, profile, lambda _: advance(), engine=engine,
                               spill=self.spill, on_piece=self._take,
                               rows=self.save is None)  # fmt: skip
        self._failed = {o.index: o.error for o in outcomes if o.error is not None}

    def _take(self, task: int, outcome: Outcome[list[Any]], piece: list[TaskSplit[Any]]) -> None:
        items = outcome.value or []
        results = [r for r in items if not isinstance(r, RunFailure)]
        runs = [r for r in items if isinstance(r, RunFailure)]
        start = len(self.table)
        ids = {} if self.spill else {t.id: t.id for split in piece for t in split.scored}
        for result in results:
            row = result if isinstance(result, dict) else result_row(result)
            key = str(row["trajectory_id"])  # the same id, as the one string the run holds
            row["trajectory_id"] = ids.get(key, key)
            self.table.append(row)
        self._pieces[outcome.index] = (task, range(start, len(self.table)), runs)
        if self.save is not None and results:
            self.save(self._trajectories(piece, results), results)
        items.clear()  # the results are rows now; the full results would grow with the cohort

    def _trajectories(
        self, piece: list[TaskSplit[Any]], results: list[ProcessResult]
    ) -> list[Trajectory]:
        if self.spill is None:
            by_id = {t.id: t for split in piece for t in split.scored}
            return [by_id[r.trajectory_id] for r in results]
        at = {self.spill.table.id_at(p): p for split in piece for p in split.scored}
        return self.spill.load_at([at[r.trajectory_id] for r in results])

    def rows(self) -> Rows:
        """The rows in split order, without those of a task whose unit failed as a whole."""
        kept = (self._pieces[i] for i in sorted(self._pieces))
        return Rows(
            self.table, (i for task, rows, _ in kept if task not in self._failed for i in rows)
        )

    def failures(self) -> list[tuple[str, Failure | RunFailure]]:
        from agentlens.process.protocols import task_groups

        groups = task_groups(self.splits)
        failed: list[tuple[str, Failure | RunFailure]] = [
            (f"task {groups[task][0].task_id}", error) for task, error in self._failed.items()
        ]
        kept = (self._pieces[i] for i in sorted(self._pieces))
        runs = dict.fromkeys(r for task, _, rs in kept if task not in self._failed for r in rs)
        return failed + [(r.run, r) for r in runs]  # a run in two pieces: once
