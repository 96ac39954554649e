"""What a cohort protocol needs of a task, and which tasks of a batch it could not score.

Leave-one-out scores a run against a reference built from OTHER passing runs of its task, and a
reference needs two donors: a failing run is scored when its task has 2 passing runs, a passing
run when its task has 3 (itself and two others). A task with exactly two passing runs and no
failing run therefore yields nothing. AgentLens-Bench takes k passing runs as donors and scores
the rest, so a task needs k passing runs and at least one more run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence, Set
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from agentlens.list_text import counted, first_few
from agentlens.process.protocols import TaskSplit, group_by_task
from agentlens.process.run_units import CohortRun

if TYPE_CHECKING:
    from agentlens.formats.run_table import RunRef

R = TypeVar("R", bound=CohortRun)
T = TypeVar("T")


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
    return unscored_in(group_by_task(trajs), scored_by_task(splits, protocol, id), id)


def covered(splits: Iterable[TaskSplit[T]], protocol: str) -> Iterator[T]:
    """The runs the splits score, and, under AgentLens-Bench, their donors (never scored)."""
    for split in splits:
        yield from split.scored
        if protocol == "agentlens-bench":
            yield from split.donors


def scored_by_task(
    splits: Iterable[TaskSplit[T]], protocol: str, key: Callable[[T], Hashable] = lambda run: run
) -> Callable[[str], Set[Hashable]]:
    """The `key`s of the runs a task's splits cover (`covered`), one task's set at a time: no
    set of every run of a cohort at once."""
    by_task: dict[str, list[TaskSplit[T]]] = {}
    for split in splits:
        by_task.setdefault(split.task_id, []).append(split)
    return lambda task: {key(run) for run in covered(by_task.get(task, []), protocol)}


def unscored_in(
    groups: Mapping[str, Sequence[R]],
    scored: Callable[[str], Set[Hashable]],
    key: Callable[[R], Hashable],
) -> list[str]:
    """`unscored_tasks` on runs grouped by task, a run counted as scored when its `key` is in
    its task's `scored` set (a cohort's spilled runs are known by their positions)."""
    lines = []
    for task in sorted(groups):
        runs = groups[task]
        covered_here = scored(task)
        left = sum(key(t) not in covered_here for t in runs)
        if not left:
            continue
        counts = [sum(t.outcome.status == s for t in runs) for s in ("passed", "failed")]
        unknown = len(runs) - sum(counts)
        lines.append(
            f"{task}: {counts[0]} passing, {counts[1]} failing, {unknown} unknown "
            f"({left} of {counted(len(runs), 'run')} not scored)"
        )
    return lines


def copied_files(groups: Mapping[str, Sequence[RunRef]]) -> list[str]:
    """`A = B` for each set of a task's files that hold the same bytes (a folder copied into
    another): each copy is scored as a run of its own, and under leave-one-out each is the
    other's donor. Only files of the same size are read again, to compare their digests; the
    size is the one the batch's walk found (`RunRef.size`), asked again only of a run whose
    path is not the file walked. A task's runs are asked of `groups` one task at a time (a
    cohort's come from its run table)."""
    found: dict[tuple[str, ...], None] = {}
    for task in groups:
        walked = {run.source.path: run.size for run in groups[task]}
        sizes = {path: _size(path, walked[path]) for path in sorted(walked)}
        for same_size in _alike(list(sizes), sizes.__getitem__):
            for copies in _alike(same_size, _digest):
                found[tuple(copies)] = None
    return [first_few(copies, COPIES_SHOWN, sep=" = ") for copies in found]


COPIES_SHOWN = 4
"""Files named in one set of copies, then `(+k more)`: 20,000 copies were one 700 KB line."""


def _alike(paths: list[str], key: Callable[[str], object]) -> list[list[str]]:
    groups: dict[object, list[str]] = {}
    for path in paths:
        groups.setdefault(key(path), []).append(path)
    return [group for k, group in groups.items() if k is not None and len(group) > 1]


def _size(path: str, walked: int | None) -> int | None:
    if walked is not None:
        return walked
    try:
        return Path(path).stat().st_size
    except OSError:  # not a file of its own (a member of an archive, gone since)
        return None


def _digest(path: str) -> str | None:
    try:
        with Path(path).open("rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError:
        return None
