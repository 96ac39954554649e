"""Cohort input that never holds every trajectory in memory (issue 25).

`read_cohort` reads the batch on the engine's workers (`formats.pooled_read`: each worker writes
the runs it reads to its own spill file; ids made unique and outcomes labelled as `stream_paths`
does). Of each run it keeps a `RunRef`'s fields as columns (`formats.run_table`): its id, task,
file, format, outcome status and place in the spill files, all that the protocol's grouping and
the messages about a run look at, plus the run's `RunPatch` when the batch changed it. The
protocol splits the runs by position (`cohort_splits`); each task's work unit, made when an
engine takes it, names its runs by their spans (`SpilledUnit`), and whoever scores the task,
this process or a worker, reads that task's runs only (`score_spilled`). Peak memory: the
columns, plus the largest task's runs per worker.
"""

from __future__ import annotations

import dataclasses
from array import array
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentlens.formats.pooled_read import PooledRead
from agentlens.formats.run_spill import RunPatch, RunRef, RunSpill, Span, read_at, runs
from agentlens.made_sequence import MadeSequence
from agentlens.trajectory import Trajectory

if TYPE_CHECKING:
    from agentlens.formats.pooled_read import ReadSummary
    from agentlens.outcomes import Unevaluated
    from agentlens.process.profiles import Profile
    from agentlens.process.pta import Reference
    from agentlens.process.run_units import ScoredRun, TaskSplit
    from agentlens.seams import Engine

__all__ = ["RunRef", "RunSpill", "read_cohort"]


@contextmanager
def read_cohort(
    paths: Sequence[str],
    *,
    engine: Engine | None = None,
    format: str | None = None,
    lenient: bool = False,
    labels: Sequence[str] = (),
    strict: bool = False,
    unevaluated: Unevaluated = "unknown",
    on_file: Callable[[Path], None] | None = None,
) -> Iterator[tuple[ReadSummary, RunSpill]]:
    """The batch read on `engine`'s workers (`pooled_read`; in this process when none, or when
    they cannot see this machine's files), each run spilled: what the batch could not read (as
    `read_paths` reports it) and the spill, with a `RunRef` per run in `read_paths`' order.
    The files are removed on leaving the block."""
    from agentlens.engine.serial import SerialEngine

    readers = engine if engine is not None and getattr(engine, "local", True) else SerialEngine()
    spill = RunSpill()
    try:
        read = PooledRead(spill, format=format, lenient=lenient, labels=labels, strict=strict,
                          unevaluated=unevaluated)  # fmt: skip
        read.read(paths, readers, on_file)
        yield read.summary, spill
    finally:
        spill.close()


@dataclass(frozen=True)
class SpilledUnit:
    """A task's work unit by reference: the spill `files` and its runs' spans in them, as one
    flat array (file, start, stop of each run), with the runs' patches (or, for a worker on
    another machine, the encoded runs themselves in `packed`): 24 bytes and a patch slot a run,
    for the units in flight only (`SpilledUnits`)."""

    task_id: str
    files: list[str]
    spans: array[int]
    patches: list[RunPatch | None]
    splits: list[tuple[list[int], list[int]]]
    packed: list[bytes] | None = None

    def span_triples(self) -> list[Span]:
        spans = self.spans
        return list(zip(spans[::3], spans[1::3], spans[2::3], strict=True))


def hydrate(unit: SpilledUnit) -> list[Trajectory]:
    """The unit's runs, as `read_paths` gives them."""
    packed = unit.packed if unit.packed is not None else read_at(unit.files, unit.span_triples())
    return runs(packed, unit.patches)


def with_packed(unit: SpilledUnit) -> SpilledUnit:
    """The unit carrying its encoded runs, for workers that cannot read this machine's files."""
    return dataclasses.replace(unit, packed=read_at(unit.files, unit.span_triples()))


def score_spilled(unit: SpilledUnit, profile: Profile, rows: bool = False) -> list[Any]:
    """The unit's `ScoredRun`s; with `rows`, each result as its cohort row (`result_row`): a
    tenth of the bytes to send back, for a cohort that keeps rows only."""
    from agentlens.process.cohort_rows import result_row
    from agentlens.process.run_units import RunFailure, TaskUnit, score_unit

    scored = score_unit(TaskUnit(unit.task_id, hydrate(unit), unit.splits), profile)
    if not rows:
        return scored
    return [r if isinstance(r, RunFailure) else result_row(r) for r in scored]


def indexed_runs(
    group: Sequence[TaskSplit[Any]], key: Callable[[Any], Hashable] = id
) -> tuple[list[Any], list[tuple[list[int], list[int]]]]:
    """Each run of a task's consecutive splits once (told apart by `key`: a run's identity,
    or a spilled run's position), and each split as (donor, scored) indices into that list:
    what a work unit carries instead of repeating a run per split."""
    index: dict[Hashable, int] = {}
    runs: list[Any] = []
    for traj in (t for split in group for t in (*split.donors, *split.scored)):
        if key(traj) not in index:
            index[key(traj)] = len(runs)
            runs.append(traj)
    pairs = [([index[key(t)] for t in s.donors], [index[key(t)] for t in s.scored]) for s in group]
    return runs, pairs


def spilled_units(
    pieces: Sequence[Sequence[TaskSplit[int]]], spill: RunSpill, local: bool
) -> SpilledUnits:
    """One unit per piece (a task's consecutive splits), each run once; packed in the unit
    when the workers are not `local` (they cannot open the spill files)."""
    return SpilledUnits(pieces, spill, local)


class SpilledUnits(MadeSequence[Sequence[Any], SpilledUnit]):
    """The units of a cohort, each made when an engine takes it (an index or a slice), so
    that only the units in flight exist, not one per task of the cohort."""

    def __init__(
        self, pieces: Sequence[Sequence[TaskSplit[int]]], spill: RunSpill, local: bool
    ) -> None:
        super().__init__(pieces, self._unit)
        self.spill = spill
        self.local = local

    def _unit(self, group: Sequence[TaskSplit[int]]) -> SpilledUnit:
        positions, pairs = indexed_runs(group, int)
        spans = array("Q", (edge for p in positions for edge in self.spill.span_at(p)))
        patches = [self.spill.patch_at(p) for p in positions]
        unit = SpilledUnit(group[0].task_id, self.spill.files, spans, patches, pairs)
        return unit if self.local else with_packed(unit)


@dataclass(frozen=True)
class SpilledRun:
    """One run by reference (`agentlens score`), as `SpilledUnit` is a task's."""

    id: str
    files: list[str]
    span: Span
    patch: RunPatch | None
    packed: bytes | None = None


def spilled_runs(spill: RunSpill, local: bool) -> list[SpilledRun]:
    """Each run kept, by reference (one walk over the table, spans included); packed in the
    run when the workers are not `local`."""
    found = [SpilledRun(r.id, spill.files, span, spill.patch(r)) for r, span in spill.walk()]
    if local:
        return found
    packed = spill.folder.read([r.span for r in found])
    return [dataclasses.replace(r, packed=data) for r, data in zip(found, packed, strict=True)]


def score_spilled_run(run: SpilledRun, reference: Reference, profile: Profile) -> ScoredRun:
    from agentlens.process.run_units import score_run

    data = run.packed if run.packed is not None else read_at(run.files, [run.span])[0]
    return score_run(runs([data], [run.patch])[0], reference, profile)
