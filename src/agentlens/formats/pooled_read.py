"""A batch read whose first pass runs on an engine's workers (`agentlens cohort`, `agentlens score`).

`stream_paths` reads every file in this process, parks each trajectory in a spool, then reads
each back to rename and label it. Here the workers read whole files (detection, reader, the
number check, redaction, the outcome sidecars beside them: most of what reading costs) and
append each trajectory, encoded once and as read, to their own spill file (`run_spill`). What
comes back per trajectory is a `RunHeader`, which this process turns into a `RunRef` at once,
in file order. It then does what needs the whole batch, as `stream_paths` does: ids made unique
(`settle_ids`; a renamed run is labelled again under its new id), `--labels` tables applied,
warnings counted. What the batch changed in a run is its `RunPatch`, applied whenever the run is
read back: no trajectory is decoded and encoded again here.

Every setting a worker's read depends on travels in `ReadJob`: a worker does not share this
process's switches (`--no-redact`, `--max-file-size`).
"""

from __future__ import annotations

import itertools
import os
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import msgspec

from agentlens import redaction
from agentlens.formats import limits
from agentlens.formats._batch_ids import _run_folder_first
from agentlens.formats._spill_codec import encode
from agentlens.formats.load import (
    ReadFailure,
    read_one,
    trace_files,
    unmatched_patterns,
    warning_lines,
)
from agentlens.formats.run_spill import RunPatch, RunSpill, spill_path
from agentlens.formats.stream import settle_ids
from agentlens.trajectory import Outcome as RunOutcome
from agentlens.trajectory import Source, Trajectory

if TYPE_CHECKING:
    from agentlens.outcomes import LabelTable, SidecarLabeler, Unevaluated
    from agentlens.seams import Engine


@dataclass(frozen=True)
class ReadJob:
    """How a worker reads: the read's options and this process's switches."""

    folder: str
    format: str | None
    lenient: bool
    strict: bool
    redact: bool
    max_file_size: int | None
    unevaluated: str
    parent: int
    """This process's id: a worker elsewhere turns exceptions into text before sending them."""


class RunHeader(msgspec.Struct, gc=False):
    """One trajectory as its worker wrote it, and what the sidecars beside it changed."""

    id: str
    task_id: str | None
    source: Source
    outcome: RunOutcome
    start: int
    stop: int
    sidecar: RunPatch | None
    lines: tuple[str, ...]
    """Its warnings, each naming its file (`warning_lines`), the sidecars' included."""


@dataclass
class FileRead:
    """What a worker sends back for one file: its trajectories' headers and its problems."""

    spill: str
    headers: list[RunHeader] = field(default_factory=list)
    failures: list[ReadFailure] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)
    sidecars: list[str] = field(default_factory=list)


_labelling: dict[tuple[str, str], SidecarLabeler] = {}


CHUNK = 64
"""Files sent to a worker at a time, at most: few enough that the progress bar moves."""
WINDOW = 4096
"""Files walked ahead of the read, at most: a window keeps the workers busy (64 chunks of 64
for two workers) while the paths held stay a few hundred kilobytes, whatever the corpus."""


Item = tuple[str, bool, str | None]
"""A `TraceFile` (path, explicit, inside) as it travels to a worker."""


def read_files(chunk: list[Item], job: ReadJob) -> list[FileRead]:
    """`read_file` on each file of the chunk, appending to this process's spill file
    (open for the chunk only: a worker holds no file of a read that has ended); a file that
    raises costs that file."""
    if os.getpid() != job.parent:
        redaction.set_enabled(job.redact)
        limits.set_max_file_size(job.max_file_size)
    with open(spill_path(job.folder), "ab") as handle:
        reads = [_read_or_fail(item, job, handle) for item in chunk]
    if os.getpid() != job.parent:
        for read in reads:
            read.failures = [_portable(failure) for failure in read.failures]
    return reads


def _read_or_fail(item: Item, job: ReadJob, handle: IO[bytes]) -> FileRead:
    try:
        return read_file(item, job, handle)
    except Exception as exc:  # a bug, or the spill file could not be written: one line
        found = FileRead(handle.name)
        found.failures.append(ReadFailure(item[0], None, f"cannot read: {exc}", exc))
        return found


def read_file(item: Item, job: ReadJob, handle: IO[bytes]) -> FileRead:
    """One file read (`read_one`) as `stream_paths` reads it, each trajectory appended to the
    spill file `handle` and labelled from its sidecars; runs in a worker (or here, serial)."""
    found = FileRead(handle.name)
    path, explicit, inside = item
    trajectories = read_one(found, Path(path), explicit, None if inside is None else Path(inside),
                            format=job.format, lenient=job.lenient, strict=job.strict)  # fmt: skip
    for trajectory in trajectories:
        _run_folder_first(trajectory)
        start = handle.tell()
        handle.write(encode(trajectory))
        _, patch, lines = sidecar_labels(trajectory, _sidecars(job))
        found.headers.append(RunHeader(
            trajectory.id, trajectory.task_id, trajectory.source, trajectory.outcome,
            start, handle.tell(), patch, lines,
        ))  # fmt: skip
    handle.flush()
    return found


def sidecar_labels(
    trajectory: Trajectory, labeller: SidecarLabeler, new_id: str | None = None
) -> tuple[Trajectory, RunPatch | None, tuple[str, ...]]:
    """The run labelled from its sidecars (as `TraceStream` labels it), on a stub with no
    steps: the stub, what changed (with `new_id`, if the batch renamed it) and its warnings."""
    had = "warnings" in trajectory.metadata
    notes = trajectory.metadata.get("warnings")
    stub = Trajectory(
        id=new_id or trajectory.id, task_id=trajectory.task_id, source=trajectory.source,
        outcome=trajectory.outcome,
        metadata={"warnings": list(notes) if isinstance(notes, list) else notes} if had else {},
    )  # fmt: skip
    labeller.label(stub)
    now = stub.metadata.get("warnings")
    # what `Trajectory.add_warnings` made of the notes before the labeller's came
    kept = len(notes) if isinstance(notes, list) else int(notes is not None)
    added = tuple(now[kept:]) if isinstance(now, list) else ()
    outcome = None if stub.outcome is trajectory.outcome else stub.outcome
    changed = new_id is not None or added or outcome is not None
    patch = RunPatch(new_id, added, outcome) if changed else None
    return stub, patch, tuple(warning_lines(stub))


def _sidecars(job: ReadJob) -> SidecarLabeler:
    """This process's labeller for the read under way: its cache of sidecars lasts as long."""
    from agentlens.outcomes import SidecarLabeler

    key = (job.folder, job.unevaluated)
    if key not in _labelling:
        _labelling.clear()
        _labelling[key] = SidecarLabeler(job.unevaluated)  # type: ignore[arg-type]
    return _labelling[key]


class WorkerReadError(Exception):
    """A read failure's exception, from another process: its traceback as text (`--debug`)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.remote_traceback = text


def _portable(failure: ReadFailure) -> ReadFailure:
    if failure.error is None:
        return failure
    error = failure.error.__cause__ or failure.error
    text = "".join(traceback.format_exception(error)).rstrip()
    return ReadFailure(failure.path, failure.format, failure.reason, WorkerReadError(text))


@dataclass
class ReadSummary:
    """What the batch could not read, and its warnings (a `load.ReadReport`, as `TraceStream`'s)."""

    failures: list[ReadFailure] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)
    sidecars: list[str] = field(default_factory=list)
    warnings: Counter[str] = field(default_factory=Counter)
    n_read: int = 0

    def take(self, read: FileRead) -> None:
        self.failures += read.failures
        self.skipped += read.skipped
        self.unread += read.unread
        self.sidecars += read.sidecars


class PooledRead:
    """A batch read on `engine`'s workers into `spill`: a `RunRef` per run in `stream_paths`'
    order, ids unique and outcomes labelled, each change a patch; `summary` says what the batch
    could not read."""

    def __init__(
        self,
        spill: RunSpill,
        *,
        format: str | None = None,
        lenient: bool = False,
        labels: Sequence[str] = (),
        strict: bool = False,
        unevaluated: Unevaluated = "unknown",
    ) -> None:
        from agentlens.outcomes import load_label_spec

        self.tables: list[LabelTable] = [load_label_spec(s, unevaluated) for s in labels]
        self.spill = spill
        self.summary = ReadSummary()
        self.job = ReadJob(spill.path, format, lenient, strict, redaction.enabled(),
                           limits.max_file_size(), unevaluated, os.getpid())  # fmt: skip
        self._lines: dict[int, tuple[str, ...]] = {}
        self._sizes: dict[str, int] = {}
        """The size the walk found of each file walked and not yet taken: a window's at most."""

    def read(
        self, specs: Iterable[str | Path], engine: Engine, on_file: Callable[[Path], None] | None
    ) -> None:
        """The files `specs` name, walked as they are read: a window of `WINDOW` files at a
        time goes to the engine, so that no list of every file is ever held."""
        specs = list(specs)
        repeats: list[ReadFailure] = []
        paths = (
            (str(path), explicit, None if inside is None else str(inside))
            for path, explicit, inside in trace_files(specs, repeats, self._sizes)
        )
        for window in iter(lambda: list(itertools.islice(paths, WINDOW)), []):
            self._read_window(window, engine, on_file)
        self._sizes = {}  # emptied by now, but a dict keeps the room it once took
        self.summary.failures[:0] = unmatched_patterns(specs) + repeats  # named first, as before
        self._settle()

    def _read_window(
        self, items: list[Item], engine: Engine, on_file: Callable[[Path], None] | None
    ) -> None:
        size = max(1, min(CHUNK, len(items) // (engine.workers * 8)))
        chunks = [items[start : start + size] for start in range(0, len(items), size)]
        arrived: dict[int, Any] = {}  # the engine's `Outcome`s, by chunk
        taken = [0]

        def done(outcome: Any) -> None:  # in any order; taken in file order
            arrived[outcome.index] = outcome
            while taken[0] in arrived:
                self._take(chunks[taken[0]], arrived.pop(taken[0]))
                taken[0] += 1
            if on_file is not None:
                for path, *_ in chunks[outcome.index]:
                    on_file(Path(path))

        engine.map(partial(read_files, job=self.job), chunks, on_done=done, chunksize=1)

    def _take(self, chunk: list[Item], outcome: Any) -> None:
        reads: list[FileRead] | None = outcome.value
        if reads is None:  # the chunk could not travel to a worker or back: a line per file
            for path, *_ in chunk:
                self._sizes.pop(path, None)
                failure = ReadFailure(path, None, f"cannot read: {outcome.error}", None)
                self.summary.failures.append(failure)
            return
        for (path, *_), read in zip(chunk, reads, strict=True):
            self.summary.take(read)
            number = self.spill.folder.number(read.spill) if read.headers else 0
            size, own = self._sizes.pop(path, None), str(Path(os.path.abspath(path)))
            for header in read.headers:
                if header.lines:
                    self._lines[len(self.spill.refs)] = header.lines
                # the file's size is the run's when the run names that file, as `read_path`
                # names it (not a path made printable, nor another file it was read from)
                mine = size if header.source.path == own else None
                self.spill.add(header, (number, header.start, header.stop), header.sidecar, mine)
        reads.clear()  # refs now; the headers would grow with the batch

    def _settle(self) -> None:
        """Ids made unique (a renamed run labelled again), tables applied, warnings counted."""
        from agentlens.outcomes import SidecarLabeler

        spill = self.spill
        groups = spill.table.same_ids()
        renames, drops = settle_ids(groups, spill.raw, self.summary.failures)
        labeller = SidecarLabeler(self.job.unevaluated)  # type: ignore[arg-type]
        for position, new_id in renames.items():
            stub, patch, lines = sidecar_labels(spill.raw(position), labeller, new_id)
            spill.replace(position, stub, patch)
            self._lines[position] = lines
        if self.tables:
            self._apply_tables(drops)
        for position in range(len(spill.refs)):
            if position not in drops:
                self.summary.warnings.update(self._lines.get(position, ()))
        spill.drop(drops)
        self.summary.n_read = len(spill.refs)

    def _apply_tables(self, drops: set[int]) -> None:
        from agentlens.outcomes import apply_tables

        for ref in self.spill.refs:
            if ref.position in drops:
                continue
            before = self.spill.patch(ref) or RunPatch()
            stub = Trajectory(id=ref.id, task_id=ref.task_id, source=ref.source,
                              outcome=before.outcome or ref.outcome)  # fmt: skip
            if apply_tables([stub], self.tables):
                patch = RunPatch(before.id, before.warnings, stub.outcome)
                self.spill.replace(ref.position, stub, patch)
