"""Evaluation protocols shared by the engine's benchmarks and the cohort tools.

`leave_one_out_split`: every run of a task is scored against a reference built from the task's
OTHER passing runs, when at least `min_donors` (2) exist: failing runs share one reference of all
passing runs; each passing run gets its own reference without itself. With `k`, the donors are the
first k of those runs after one shared `random.Random(seed)` shuffle (bounds the merge cost).

`agentlens_bench_split`: the AgentLens-Bench protocol (spec §14.1) — tasks in sorted order; per
task, the file-name-sorted passing runs are shuffled by ONE `random.Random(seed)` shared across
tasks; the first k are the reference donors, every other run of the task is scored. Tasks with
fewer than k passing runs are skipped and consume no random numbers.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from agentlens.engine.outcome import Outcome
from agentlens.engine.serial import SerialEngine
from agentlens.errors import AgentLensError, ConfigError
from agentlens.formats.run_table import task_key
from agentlens.process.cohort_runs import RunSpill, indexed_runs, score_spilled, spilled_units
from agentlens.process.profiles import DEFAULT_PROFILE
from agentlens.process.run_units import (
    CohortRun,
    RunFailure,
    TaskSplit,
    TaskUnit,
    run_name,
    score_unit,
)
from agentlens.trajectory import Trajectory

if TYPE_CHECKING:
    from agentlens.process.profiles import Profile
    from agentlens.process.result import ProcessResult
    from agentlens.seams import Engine

R = TypeVar("R", bound=CohortRun)
PROTOCOLS = ("agentlens-bench", "leave-one-out")
ScoredRun: TypeAlias = "ProcessResult | RunFailure"
__all__ = ["RunFailure", "ScoredRun", "run_name"]


def _source_name(traj: CohortRun) -> str:
    return traj.source.path.rsplit("/", 1)[-1] or traj.id


def agentlens_bench_split(
    trajs_by_task: Mapping[str, Sequence[R]], k: int = 5, seed: int = 42
) -> list[TaskSplit[R]]:
    return list(bench_splits(trajs_by_task, k, seed))


def bench_splits(
    trajs_by_task: Mapping[str, Sequence[R]], k: int = 5, seed: int = 42
) -> Iterator[TaskSplit[R]]:
    """`agentlens_bench_split`, a task at a time (each task's runs asked for when it comes)."""
    rng = random.Random(seed)
    for task, passing, others in _task_runs(trajs_by_task):
        if len(passing) < k:
            continue
        shuffled = passing.copy()
        rng.shuffle(shuffled)
        donors = shuffled[:k]
        donor_ids = {id(t) for t in donors}
        scored = [t for t in passing if id(t) not in donor_ids] + others
        yield TaskSplit(task, donors, scored)


def _task_runs(
    trajs_by_task: Mapping[str, Sequence[R]],
) -> Iterator[tuple[str, list[R], list[R]]]:
    """Each task in name order, with its passing runs and the others, each in file-name order."""
    for task in sorted(trajs_by_task):
        runs = sorted(trajs_by_task[task], key=_source_name)
        passing = [t for t in runs if t.outcome.status == "passed"]
        yield task, passing, [t for t in runs if t.outcome.status != "passed"]


def group_by_task(trajs: Sequence[R]) -> dict[str, list[R]]:
    """Runs grouped by `task_key`."""
    groups: dict[str, list[R]] = {}
    for traj in trajs:
        groups.setdefault(task_key(traj), []).append(traj)
    return groups


def leave_one_out_split(
    trajs_by_task: Mapping[str, Sequence[R]],
    min_donors: int = 2,
    k: int | None = None,
    seed: int = 42,
) -> list[TaskSplit[R]]:
    return list(leave_one_out_splits(trajs_by_task, min_donors, k, seed))


def leave_one_out_splits(
    trajs_by_task: Mapping[str, Sequence[R]],
    min_donors: int = 2,
    k: int | None = None,
    seed: int = 42,
) -> Iterator[TaskSplit[R]]:
    """`leave_one_out_split`, a task at a time."""
    rng = random.Random(seed)
    for task, passing, others in _task_runs(trajs_by_task):
        if others and len(passing) >= min_donors:
            yield TaskSplit(task, _donors(passing, k, rng), others)
        for run in passing:
            rest = [t for t in passing if t is not run]
            if len(rest) >= min_donors:
                yield TaskSplit(task, _donors(rest, k, rng), [run])


def _donors(runs: list[R], k: int | None, rng: random.Random) -> list[R]:
    if k is None or k >= len(runs):
        return runs
    shuffled = runs.copy()
    rng.shuffle(shuffled)
    return shuffled[:k]


def split_cohort(
    trajs: Sequence[R], protocol: str, *, k: int | None = None, seed: int = 42
) -> list[TaskSplit[R]]:
    """Donor/scored splits for `protocol`: `agentlens-bench` (k defaults to 5) or `leave-one-out`
    (all other passing runs unless `k` is given)."""
    return list(iter_splits(group_by_task(trajs), protocol, k=k, seed=seed))


def iter_splits(
    groups: Mapping[str, Sequence[R]], protocol: str, *, k: int | None = None, seed: int = 42
) -> Iterator[TaskSplit[R]]:
    """`split_cohort` on runs grouped by task, a task at a time."""
    if protocol == "agentlens-bench":
        return bench_splits(groups, k=k or 5, seed=seed)
    if protocol == "leave-one-out":
        return leave_one_out_splits(groups, k=k, seed=seed)
    raise ConfigError(f"unknown protocol {protocol!r}; choose one of {PROTOCOLS}")


def score_splits(
    splits: Sequence[TaskSplit[Trajectory]],
    profile: Profile = DEFAULT_PROFILE,
    on_split: Callable[[TaskSplit[Any]], None] | None = None,
    *,
    engine: Engine | None = None,
) -> list[ProcessResult]:
    """Build each split's reference from its donors and score its runs against it, in order.
    The first task whose scoring raised re-raises (run by another process: `UnitError`); the
    first run that failed alone raises `AgentLensError` naming it (see `score_tasks`)."""
    outcomes = score_tasks(splits, profile, on_split, engine=engine)
    results = []
    for item in (item for outcome in outcomes for item in outcome.unwrap()):
        if isinstance(item, RunFailure):
            raise AgentLensError(str(item))
        results.append(item)
    return results


def score_tasks(
    splits: Sequence[TaskSplit[Any]],
    profile: Profile = DEFAULT_PROFILE,
    on_split: Callable[[TaskSplit[Any]], None] | None = None,
    *,
    engine: Engine | None = None,
    spill: RunSpill | None = None,
    on_piece: Callable[[int, Outcome[list[ScoredRun]], list[TaskSplit[Any]]], None] | None = None,
    rows: bool = False,
) -> list[Outcome[list[ScoredRun]]]:
    """`score_splits` on `engine` (default serial): per task (`task_groups`) its results
    (outcome.value) or its failure (outcome.error), the other tasks kept; `on_split` per split.
    A run that cannot be labelled or scored is a `RunFailure` among its task's results (a
    donor that cannot be labelled is left out of the reference), so one bad step costs its run
    only; a task fails as a whole only when its work unit itself dies.

    A task is one work unit, or several on an engine with more workers than the tasks would keep
    busy (a cohort of one large task): its splits are then cut into pieces of at least
    `MIN_PIECE` splits, each piece sent with the runs it needs. Results are the same either way,
    in the same order; a task fails as a whole when one of its pieces fails.

    With `spill` (`cohort_runs.read_cohort`), the splits hold the runs' positions in the spill
    (`cohort_splits`), and each unit names its runs in the spill file instead of carrying them
    (`SpilledUnit`): a worker reads its task's runs itself, or, on an engine whose workers cannot
    see this machine's files, gets them packed. `on_piece(task index, outcome, the unit's
    splits)` gets each unit's outcome as it arrives (in any order: its `index` is the unit's);
    what it leaves in `outcome.value` is what is returned. With `rows` (and `spill`), each result comes as its cohort row.
    """
    runner: Engine = engine or SerialEngine()
    groups = task_groups(splits)
    size = piece_size(len(splits), runner.workers)
    pieces = [(task, piece) for task, group in enumerate(groups) for piece in _cut(group, size)]

    def done(outcome: Outcome[Any]) -> None:
        if on_piece is not None:
            task, piece = pieces[outcome.index]
            on_piece(task, outcome, piece)
        if on_split is not None:
            for split in pieces[outcome.index][1]:
                on_split(split)

    units: Sequence[Any]
    if spill is None:
        units = [_unit(piece) for _, piece in pieces]
        fn: Callable[[Any], list[ScoredRun]] = partial(score_unit, profile=profile)
    else:
        units = spilled_units([piece for _, piece in pieces], spill, getattr(runner, "local", True))
        fn = partial(score_spilled, profile=profile, rows=rows)
    outcomes = runner.map(fn, units, on_done=done, chunksize=1)
    return _per_task(len(groups), [task for task, _ in pieces], outcomes)


MIN_PIECE = 4
"""Splits per work unit, at least, when a task is cut: each unit carries the task's runs."""


def piece_size(n_splits: int, workers: int) -> int:
    """Splits per work unit: about four units per worker, so that the last ones to finish are
    small; a single worker takes each task whole."""
    if workers <= 1:
        return max(n_splits, 1)
    return max(MIN_PIECE, math.ceil(n_splits / (workers * 4)))


def _cut(group: list[TaskSplit[R]], size: int) -> list[list[TaskSplit[R]]]:
    """`group` in nearly equal consecutive pieces of at most `size` splits."""
    count = math.ceil(len(group) / size)
    bounds = [round(i * len(group) / count) for i in range(count + 1)]
    return [group[a:b] for a, b in itertools.pairwise(bounds)]


def _per_task(
    n_tasks: int, task_of: list[int], outcomes: list[Outcome[list[ScoredRun]]]
) -> list[Outcome[list[ScoredRun]]]:
    """The pieces' outcomes joined per task, in order; a task's first failing piece fails it."""
    joined: list[Outcome[list[ScoredRun]]] = [Outcome(i, value=[]) for i in range(n_tasks)]
    for task, outcome in zip(task_of, outcomes, strict=True):
        whole = joined[task]
        if whole.error is not None:
            continue
        if outcome.error is not None:
            joined[task] = Outcome(task, error=outcome.error, exception=outcome.exception)
        else:
            assert whole.value is not None and outcome.value is not None
            whole.value.extend(outcome.value)
    return joined


def task_groups(splits: Sequence[TaskSplit[R]]) -> list[list[TaskSplit[R]]]:
    """Consecutive splits of the same task: the work units of `score_tasks`, in its order."""
    groups: list[list[TaskSplit[R]]] = []
    for split in splits:
        if groups and groups[-1][0].task_id == split.task_id:
            groups[-1].append(split)
        else:
            groups.append([split])
    return groups


def _unit(group: list[TaskSplit[Trajectory]]) -> TaskUnit:
    runs, pairs = indexed_runs(group)
    return TaskUnit(group[0].task_id, runs, pairs)
