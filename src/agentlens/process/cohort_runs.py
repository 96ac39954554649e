"""Cohort input that never holds every trajectory in memory (issue 25).

`read_cohort` reads the batch as `stream_paths` hands it out (ids made unique, outcome labels
from sidecars and `--labels` applied) and writes each run, final, to a named spill file
(`formats._spool.Spool`). Of each run it keeps a `RunRef`: its id, task, file, format, outcome
status and place in the spill file, about 200 bytes, all that the protocol's grouping and
the messages about a run look at. The protocol splits the refs; each task's work unit names its
runs by their spans in the spill file (`SpilledUnit`), and whoever scores the task, this process
or a worker, reads that task's runs only (`score_spilled`). Peak memory: the refs, plus the
largest task's runs per worker.
"""

from __future__ import annotations

import dataclasses
from array import array
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import msgspec

from agentlens.formats._spool import Spool, decode, read_spans
from agentlens.trajectory import Outcome, Source, Trajectory

if TYPE_CHECKING:
    from agentlens.formats.stream import TraceStream
    from agentlens.outcomes import Unevaluated
    from agentlens.process.profiles import Profile
    from agentlens.process.pta import Reference
    from agentlens.process.run_units import CohortRun, ScoredRun, TaskSplit

Span = tuple[int, int]
R = TypeVar("R", bound="CohortRun")
_OUTCOMES: dict[str, Outcome] = {}


class RunRef(msgspec.Struct, frozen=True, gc=False):
    """One run of a cohort as it waits in the spill file: what grouping it by task, sorting it
    by file name, naming it in a message and finding it again need, and no more. Strings shared
    by many runs (folder, task, format) are one object each (`RunRefs.add`)."""

    id: str
    task_id: str | None
    folder: str | None
    """The source path up to its last `/` (None: a path without one)."""
    file: str
    """The file name, or, when it starts with the id (`<id>.json`, most readers), what follows
    the id: one shared string instead of a second copy of the id per run."""
    after_id: bool
    format: str
    index: int | None
    status: str
    position: int

    @property
    def name(self) -> str:
        return self.id + self.file if self.after_id else self.file

    @property
    def source(self) -> Source:
        path = self.name if self.folder is None else f"{self.folder}/{self.name}"
        return Source(format=self.format, path=path, index=self.index)

    @property
    def outcome(self) -> Outcome:
        """The run's outcome status (what a protocol reads); its source and detail stay in the
        spill file with the run."""
        return _OUTCOMES.setdefault(self.status, Outcome(status=self.status))  # type: ignore[arg-type]


class RunSpill:
    """The runs of a cohort in a named spill file, and a `RunRef` of each; removed on `close`."""

    def __init__(self) -> None:
        self._spool = Spool(named=True)
        assert self._spool.path is not None
        self.path: str = self._spool.path
        self.refs: list[RunRef] = []
        self._shared: dict[str, str] = {}

    def add(self, traj: Trajectory) -> RunRef:
        position = self._spool.append(traj)
        folder, slash, name = traj.source.path.rpartition("/")
        share = self._share
        task = None if traj.task_id is None else share(traj.task_id)
        after_id = name.startswith(traj.id)
        file = share(name[len(traj.id) :]) if after_id else name
        ref = RunRef(
            traj.id, task, share(folder) if slash else None, file, after_id,
            share(traj.source.format), traj.source.index, share(traj.outcome.status), position,
        )  # fmt: skip
        self.refs.append(ref)
        return ref

    def _share(self, text: str) -> str:
        return self._shared.setdefault(text, text)

    def span(self, ref: RunRef) -> Span:
        return self._spool.span(ref.position)

    def flush(self) -> None:
        self._spool.flush()

    def close(self) -> None:
        self._spool.close()


@contextmanager
def read_cohort(
    paths: Sequence[str],
    *,
    format: str | None = None,
    lenient: bool = False,
    labels: Sequence[str] = (),
    strict: bool = False,
    unevaluated: Unevaluated = "unknown",
    on_file: Callable[[Path], None] | None = None,
) -> Iterator[tuple[TraceStream, RunSpill]]:
    """`stream_paths` read through, each run spilled: the stream (failures, warnings, counts,
    as `read_paths` reports them) and the spill with a `RunRef` per run in the stream's order.
    The file is removed on leaving the block."""
    from agentlens.formats.stream import stream_paths

    stream = stream_paths(paths, format=format, lenient=lenient, labels=labels,
                          on_file=on_file, strict=strict, unevaluated=unevaluated)  # fmt: skip
    spill = RunSpill()
    try:
        for trajectory in stream:
            spill.add(trajectory)
        spill.flush()
        yield stream, spill
    finally:
        spill.close()


@dataclass(frozen=True)
class SpilledUnit:
    """A task's work unit by reference: its runs' spans in the spill file at `path`, as one
    flat array, start and stop of each run (or, for a worker on another machine, the encoded
    runs themselves in `packed`). Every unit of a cohort exists at once: 16 bytes a run."""

    task_id: str
    path: str
    spans: array[int]
    splits: list[tuple[list[int], list[int]]]
    packed: list[bytes] | None = None

    def span_pairs(self) -> list[Span]:
        return list(zip(self.spans[::2], self.spans[1::2], strict=True))


def hydrate(unit: SpilledUnit) -> list[Trajectory]:
    """The unit's runs, as `read_paths` gives them."""
    packed = unit.packed if unit.packed is not None else read_spans(unit.path, unit.span_pairs())
    return [decode(data) for data in packed]


def with_packed(unit: SpilledUnit) -> SpilledUnit:
    """The unit carrying its encoded runs, for workers that cannot read this machine's files."""
    return dataclasses.replace(unit, packed=read_spans(unit.path, unit.span_pairs()))


def score_spilled(unit: SpilledUnit, profile: Profile) -> list[ScoredRun]:
    from agentlens.process.run_units import TaskUnit, score_unit

    return score_unit(TaskUnit(unit.task_id, hydrate(unit), unit.splits), profile)


def indexed_runs(
    group: Sequence[TaskSplit[R]],
) -> tuple[list[R], list[tuple[list[int], list[int]]]]:
    """Each run of a task's consecutive splits once, and each split as (donor, scored) indices
    into that list: what a work unit carries instead of repeating a run per split."""
    index: dict[int, int] = {}
    runs: list[R] = []
    for traj in (t for split in group for t in (*split.donors, *split.scored)):
        if id(traj) not in index:
            index[id(traj)] = len(runs)
            runs.append(traj)
    pairs = [([index[id(t)] for t in s.donors], [index[id(t)] for t in s.scored]) for s in group]
    return runs, pairs


def spilled_units(
    pieces: Sequence[Sequence[TaskSplit[RunRef]]], spill: RunSpill, local: bool
) -> list[SpilledUnit]:
    """One unit per piece (a task's consecutive splits), each run once; packed in the unit
    when the workers are not `local` (they cannot open the spill file)."""
    units = []
    for group in pieces:
        runs, pairs = indexed_runs(group)
        spans = array("Q", (edge for r in runs for edge in spill.span(r)))
        unit = SpilledUnit(group[0].task_id, spill.path, spans, pairs)
        units.append(unit if local else with_packed(unit))
    return units


def load(refs: Sequence[RunRef], spill: RunSpill) -> list[Trajectory]:
    """Runs back from the spill file, by their refs."""
    return [decode(data) for data in read_spans(spill.path, [spill.span(r) for r in refs])]


@dataclass(frozen=True)
class SpilledRun:
    """One run by reference (`agentlens score`), as `SpilledUnit` is a task's."""

    id: str
    path: str
    span: Span
    packed: bytes | None = None


def spilled_runs(refs: Sequence[RunRef], spill: RunSpill, local: bool) -> list[SpilledRun]:
    runs = [SpilledRun(r.id, spill.path, spill.span(r)) for r in refs]
    if local:
        return runs
    packed = read_spans(spill.path, [r.span for r in runs])
    return [dataclasses.replace(r, packed=data) for r, data in zip(runs, packed, strict=True)]


def score_spilled_run(run: SpilledRun, reference: Reference, profile: Profile) -> ScoredRun:
    from agentlens.process.run_units import score_run

    data = run.packed if run.packed is not None else read_spans(run.path, [run.span])[0]
    return score_run(decode(data), reference, profile)
