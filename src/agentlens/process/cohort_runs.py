"""Cohort input that never holds every trajectory in memory (issue 25).

`read_cohort` reads the files one at a time, as `read_paths` would, and keeps of each run a
*stub*: the trajectory without its steps (id, task, outcome, source, metadata: all that the
protocol's grouping, the batch's id fixes and the outcome labels look at). The run itself goes,
msgpack-packed, to a spill file. The protocol splits the stubs; each task's work unit names its
runs by their place in the spill file (`SpilledUnit`), and whoever scores the task, this process
or a worker, unpacks that task's runs only (`score_spilled`). Peak memory: the stubs, plus the
largest task's runs per worker.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from agentlens import redaction
from agentlens.engine import _codec
from agentlens.formats._batch_ids import _rename, unique_ids
from agentlens.formats.load import ReadFailure, ReadResult, is_pattern, iter_trace_paths, read_one
from agentlens.os_names import printable
from agentlens.trajectory import Trajectory

if TYPE_CHECKING:
    from agentlens.outcomes import Unevaluated
    from agentlens.process.profiles import Profile
    from agentlens.process.pta import Reference
    from agentlens.process.run_units import ScoredRun, TaskSplit


@dataclass(frozen=True)
class Span:
    """Where one packed run lies in the spill file."""

    offset: int
    length: int


@dataclass(frozen=True)
class FileRef:
    """A run left in its own file (`RunSpill(deferred=True)`): the file, and which of the
    trajectories `read_path` gives for it."""

    path: str
    position: int


@dataclass(frozen=True)
class ReadOptions:
    format: str | None = None
    lenient: bool = False
    redact: bool = True


class RunSpill:
    """An append-only temporary file of packed runs; removed on `close`.

    `deferred`: nothing is spilled; each run is named by its file, which whoever scores the
    task reads again, in full. For a pool of workers: the first pass reads the files without
    the secret-redaction pass (most of a read's CPU), redacting the stubs alone, and the
    workers, in parallel, read and redact their task's runs."""

    def __init__(self, options: ReadOptions, *, deferred: bool = False) -> None:
        self.options, self.deferred = options, deferred
        handle, self.path = tempfile.mkstemp(prefix="agentlens-cohort-", suffix=".spill")
        self._file = os.fdopen(handle, "w+b")
        self.spans: dict[int, Span | FileRef] = {}
        """id(stub) -> its run's span or file."""

    def add(self, traj: Trajectory, ref: FileRef) -> Trajectory:
        """Spill `traj` (or, deferred, note its file); its stub, which `span` finds it by."""
        found = stub(traj)
        if self.deferred:
            if self.options.redact:  # as if read redacted: redaction maps each string alone
                found = redaction.redact_trajectory(found)
            self.spans[id(found)] = ref
            return found
        data = _codec.pack(traj)
        offset = self._file.seek(0, os.SEEK_END)
        self._file.write(data)
        self.spans[id(found)] = Span(offset, len(data))
        return found

    def span(self, traj: Trajectory) -> Span | FileRef:
        return self.spans[id(traj)]

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.close()
        Path(self.path).unlink(missing_ok=True)


def stub(traj: Trajectory) -> Trajectory:
    """`traj` without steps or task text (its sub-agents too), which come back from the spill
    file with the run (`restore`): a stub is what every run of the cohort keeps in memory at
    once, and the issue text is most of it. The metadata dict is shared, not copied."""
    subs = [stub(s) for s in traj.subtrajectories]
    return msgspec.structs.replace(traj, steps=[], task=None, subtrajectories=subs)


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
    deferred: bool = False,
) -> Iterator[tuple[ReadResult, RunSpill]]:
    """`read_paths` with stubs for trajectories (same ids, outcomes, failures and warnings),
    and the spill file holding the runs (or, `deferred`, naming their files); the file is
    removed on leaving the block."""
    from agentlens.outcomes import apply_tables, discover_labels, load_label_spec

    tables = [load_label_spec(spec, unevaluated) for spec in labels]  # bad ones fail first
    spill = RunSpill(ReadOptions(format, lenient, redaction.enabled()), deferred=deferred)
    try:
        result = ReadResult()
        _no_match(result, paths)
        for path, explicit in iter_trace_paths(paths):
            one = ReadResult()
            with _redacting(spill.options.redact and not deferred):
                runs = read_one(one, path, explicit, format=format, lenient=lenient, strict=strict)
                one.trajectories.extend(runs)
            _merge(result, one, spill, path)
            if on_file is not None:
                on_file(path)
        spill.flush()
        for repeat, why in unique_ids(result.trajectories):
            result.trajectories.remove(repeat)
            result.failures.append(ReadFailure(repeat.source.path, repeat.source.format, why, None))
        discover_labels(result.trajectories, unevaluated)
        apply_tables(result.trajectories, tables)
        yield result, spill
    finally:
        spill.close()


def _no_match(result: ReadResult, paths: Sequence[str]) -> None:
    for text in map(str, paths):
        if is_pattern(text) and not glob.glob(text, recursive=True):
            failure = ReadFailure(printable(text), None, "no file matches this pattern", None)
            result.failures.append(failure)


@contextmanager
def _redacting(on: bool) -> Iterator[None]:
    """The process-wide redaction switch set to `on` for the block (a CLI is one thread)."""
    before = redaction.switch()  # not enabled(): that would pin the environment's answer
    redaction.set_enabled(on)
    try:
        yield
    finally:
        redaction.set_enabled(before)


def _merge(result: ReadResult, one: ReadResult, spill: RunSpill, path: Path) -> None:
    added = enumerate(one.trajectories)
    result.trajectories += [spill.add(t, FileRef(str(path), i)) for i, t in added]
    result.failures += one.failures
    result.skipped += one.skipped
    result.unread += one.unread
    result.sidecars += one.sidecars


@dataclass(frozen=True)
class SpilledUnit:
    """A task's work unit by reference: its runs' stubs and spans in the spill file at `path`
    (or, for a worker on another machine, the packed runs themselves in `packed`)."""

    task_id: str
    path: str
    stubs: list[Trajectory]
    spans: list[Span | FileRef]
    splits: list[tuple[list[int], list[int]]]
    packed: list[bytes] | None = None
    options: ReadOptions = ReadOptions()


def hydrate(unit: SpilledUnit) -> list[Trajectory]:
    """The unit's runs as `read_paths` gives them: unpacked (or read again from their files),
    then given the batch's ids and outcome labels, which the stubs got after the first pass."""
    if unit.packed is not None:
        runs = [_codec.unpack(data) for data in unit.packed]
    else:
        runs = fetch(unit.spans, unit.path, unit.options)
    return [restore(run, found) for run, found in zip(runs, unit.stubs, strict=True)]


def fetch(spans: Sequence[Span | FileRef], path: str, options: ReadOptions) -> list[Trajectory]:
    """The runs, not yet restored: unpacked from the spill file at `path`, or read again."""
    refs = [s for s in spans if isinstance(s, FileRef)]
    if refs:  # a spill is all spans or all file references
        return reread(refs, options)
    with open(path, "rb") as handle:
        return [_codec.unpack(_read_span(handle, span)) for span in spans]  # type: ignore[arg-type]


def reread(refs: Sequence[FileRef], options: ReadOptions) -> list[Trajectory]:
    """Each referenced run read again from its file (each file once), redacted as the first
    pass would have."""
    from agentlens.formats.load import read_path

    files: dict[str, list[Trajectory]] = {}
    with _redacting(options.redact):
        for ref in refs:
            if ref.path not in files:
                files[ref.path] = read_path(ref.path, format=options.format,
                                            lenient=options.lenient)  # fmt: skip
    return [files[ref.path][ref.position] for ref in refs]


def _packed(spans: Sequence[Span | FileRef], path: str, options: ReadOptions) -> list[bytes]:
    if any(isinstance(s, FileRef) for s in spans):
        return [_codec.pack(t) for t in fetch(spans, path, options)]
    with open(path, "rb") as handle:
        return [_read_span(handle, span) for span in spans]  # type: ignore[arg-type]


def _read_span(handle: object, span: Span) -> bytes:
    handle.seek(span.offset)  # type: ignore[attr-defined]
    data: bytes = handle.read(span.length)  # type: ignore[attr-defined]
    return data


def restore(full: Trajectory, found: Trajectory) -> Trajectory:
    if full.id != found.id:  # renamed by `unique_ids`: sub-agents and their links too
        _rename(full, found.id)
    full.outcome = found.outcome
    full.metadata = found.metadata
    return full


def with_packed(unit: SpilledUnit) -> SpilledUnit:
    """The unit carrying its packed runs, for workers that cannot read this machine's files."""
    return dataclasses.replace(unit, packed=_packed(unit.spans, unit.path, unit.options))


def score_spilled(unit: SpilledUnit, profile: Profile) -> list[ScoredRun]:
    from agentlens.process.run_units import TaskUnit, score_unit

    return score_unit(TaskUnit(unit.task_id, hydrate(unit), unit.splits), profile)


def indexed_runs(
    group: Sequence[TaskSplit],
) -> tuple[list[Trajectory], list[tuple[list[int], list[int]]]]:
    """Each run of a task's consecutive splits once, and each split as (donor, scored) indices
    into that list: what a work unit carries instead of repeating a run per split."""
    index: dict[int, int] = {}
    runs: list[Trajectory] = []
    for traj in (t for split in group for t in (*split.donors, *split.scored)):
        if id(traj) not in index:
            index[id(traj)] = len(runs)
            runs.append(traj)
    pairs = [([index[id(t)] for t in s.donors], [index[id(t)] for t in s.scored]) for s in group]
    return runs, pairs


def spilled_units(
    pieces: Sequence[Sequence[TaskSplit]], spill: RunSpill, local: bool
) -> list[SpilledUnit]:
    """One unit per piece (a task's consecutive splits), each run once; packed in the unit
    when the workers are not `local` (they cannot open the spill file)."""
    units = []
    for group in pieces:
        runs, pairs = indexed_runs(group)
        spans = [spill.span(t) for t in runs]
        unit = SpilledUnit(group[0].task_id, spill.path, runs, spans, pairs, options=spill.options)
        units.append(unit if local else with_packed(unit))
    return units


def load(stubs: Sequence[Trajectory], spill: RunSpill) -> list[Trajectory]:
    """Runs back from the spill file (or their own files, each read once), by their stubs."""
    runs = fetch([spill.span(s) for s in stubs], spill.path, spill.options)
    return [restore(run, found) for run, found in zip(runs, stubs, strict=True)]


@dataclass(frozen=True)
class SpilledRun:
    """One run by reference (`agentlens score`), as `SpilledUnit` is a task's."""

    path: str
    stub: Trajectory
    span: Span | FileRef
    options: ReadOptions
    packed: bytes | None = None


def spilled_runs(stubs: Sequence[Trajectory], spill: RunSpill, local: bool) -> list[SpilledRun]:
    runs = [SpilledRun(spill.path, s, spill.span(s), spill.options) for s in stubs]
    if local:
        return runs
    packed = _packed([r.span for r in runs], spill.path, spill.options)
    return [dataclasses.replace(r, packed=data) for r, data in zip(runs, packed, strict=True)]


def score_spilled_run(run: SpilledRun, reference: Reference, profile: Profile) -> ScoredRun:
    from agentlens.process.run_units import score_run

    if run.packed is None:
        (full,) = fetch([run.span], run.path, run.options)
    else:
        full = _codec.unpack(run.packed)
    return score_run(restore(full, run.stub), reference, profile)
