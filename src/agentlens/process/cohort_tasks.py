"""A cohort's results gathered task by task as the work units finish: each unit's results
become cohort rows (and, with a store, records saved a task at a time) as soon as it arrives,
and the results themselves are dropped; what stays is one small row per run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from agentlens.process.cohort_rows import Row, result_row
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
    def __init__(
        self, splits: Sequence[TaskSplit], spill: RunSpill | None, save: SaveTask | None = None
    ) -> None:
        self.splits = splits
        self.spill = spill
        self.save = save
        self._pieces: dict[int, tuple[int, list[Row], list[RunFailure]]] = {}
        self._failed: dict[int, Failure] = {}
        self._by_id = {t.id: t for s in splits for t in s.scored}

    def score(self, profile: Profile, engine: Engine | None, advance: Callable[[], None]) -> None:
        from agentlens.process.protocols import score_tasks

        outcomes = score_tasks(self.splits, profile, lambda _: advance(), engine=engine,
                               spill=self.spill, on_piece=self._take)  # fmt: skip
        self._failed = {o.index: o.error for o in outcomes if o.error is not None}

    def _take(self, task: int, outcome: Outcome[list[Any]]) -> None:
        items = outcome.value or []
        results = [r for r in items if not isinstance(r, RunFailure)]
        runs = [r for r in items if isinstance(r, RunFailure)]
        self._pieces[outcome.index] = (task, [result_row(r) for r in results], runs)
        if self.save is not None and results:
            self.save(self._trajectories(results), results)
        items.clear()  # the results are rows now; the full results would grow with the cohort

    def _trajectories(self, results: list[ProcessResult]) -> list[Trajectory]:
        from agentlens.process.cohort_runs import load

        found = [self._by_id[r.trajectory_id] for r in results]
        return load(found, self.spill) if self.spill else found

    def rows(self) -> list[Row]:
        """The rows in split order, without those of a task whose unit failed as a whole."""
        kept = (self._pieces[i] for i in sorted(self._pieces))
        return [row for task, rows, _ in kept if task not in self._failed for row in rows]

    def failures(self) -> list[tuple[str, Failure | RunFailure]]:
        from agentlens.process.protocols import task_groups

        groups = task_groups(self.splits)
        failed: list[tuple[str, Failure | RunFailure]] = [
            (f"task {groups[task][0].task_id}", error) for task, error in self._failed.items()
        ]
        kept = (self._pieces[i] for i in sorted(self._pieces))
        runs = dict.fromkeys(r for task, _, rs in kept if task not in self._failed for r in rs)
        return failed + [(r.run, r) for r in runs]  # a run in two pieces: once
