"""A batch's runs waiting in spill files, one `RunRef` each in memory (issue 25).

The workers of a pooled read (`pooled_read`) write the runs they read to their own files in one
`SpillFolder`. Of each run this process keeps a `RunRef`: its id, task, file, format, outcome
status and where it lies, a few hundred bytes, all that grouping runs by task, naming a run in a
message and finding it again need; and, for a run the batch changed after its worker wrote it
(a new id, an outcome from a sidecar or `--labels`), a `RunPatch`, applied whenever the run is
read back (`RunSpill.load`, `runs`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from array import array
from collections.abc import Iterable, Sequence
from typing import Protocol

import msgspec

from agentlens.formats._batch_ids import _rename
from agentlens.formats._spill_codec import decode
from agentlens.formats._spool import read_spans
from agentlens.trajectory import Outcome, Source, Trajectory

Span = tuple[int, int, int]
"""(spill file number, start, stop) of an encoded trajectory."""
_OUTCOMES: dict[str, Outcome] = {}


class RunFields(Protocol):
    """What a `RunRef` is made from: a trajectory, its stub or a worker's `RunHeader`."""

    @property
    def id(self) -> str: ...
    @property
    def task_id(self) -> str | None: ...
    @property
    def source(self) -> Source: ...
    @property
    def outcome(self) -> Outcome: ...


class RunPatch(msgspec.Struct, frozen=True, gc=False):
    """What the batch changed in a run after its worker wrote it, applied on reading it back."""

    id: str | None = None
    warnings: tuple[str, ...] = ()
    outcome: Outcome | None = None

    def apply(self, trajectory: Trajectory) -> Trajectory:
        if self.id is not None:
            _rename(trajectory, self.id)
        if self.warnings:
            trajectory.add_warnings(self.warnings)
        if self.outcome is not None:
            trajectory.outcome = self.outcome
        return trajectory


class SpillFolder:
    """The workers' spill files of one read, and where each run lies in them; the folder is
    removed on `close`."""

    def __init__(self) -> None:
        self.path = tempfile.mkdtemp(prefix="agentlens-spill-")
        self.files: list[str] = []
        self._numbers: dict[str, int] = {}

    def number(self, spill: str) -> int:
        if spill not in self._numbers:
            self._numbers[spill] = len(self.files)
            self.files.append(spill)
        return self._numbers[spill]

    def read(self, spans: Sequence[Span]) -> list[bytes]:
        return read_at(self.files, spans)

    def close(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def spill_path(folder: str) -> str:
    """This process's spill file in `folder` (appended to by one process only)."""
    return os.path.join(folder, f"{os.getpid()}.spill")


def read_at(files: Sequence[str], spans: Sequence[Span]) -> list[bytes]:
    """The encoded runs at `spans` of the spill `files`, in order, each file opened once: from
    any process on this machine."""
    found: list[bytes] = [b""] * len(spans)
    by_file: dict[int, list[int]] = {}
    for slot, span in enumerate(spans):
        by_file.setdefault(span[0], []).append(slot)
    for number, slots in by_file.items():
        pieces = read_spans(files[number], [(spans[s][1], spans[s][2]) for s in slots])
        for slot, data in zip(slots, pieces, strict=True):
            found[slot] = data
    return found


def runs(packed: Iterable[bytes], patches: Iterable[RunPatch | None]) -> list[Trajectory]:
    """Encoded runs as the batch decided them: decoded, each with its patch applied."""
    return [
        decode(data) if patch is None else patch.apply(decode(data))
        for data, patch in zip(packed, patches, strict=True)
    ]


class RunRef(msgspec.Struct, frozen=True, gc=False):
    """One run of a batch as it waits in a spill file: what grouping it by task, sorting it
    by file name, naming it in a message and finding it again need, and no more. Strings shared
    by many runs (folder, task, format) are one object each (`RunSpill.add`)."""

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
    """The runs of a batch in the workers' spill files, a `RunRef` of each in the batch's order,
    and the patches of the runs the batch changed; the files are removed on `close`."""

    def __init__(self) -> None:
        self.folder = SpillFolder()
        self.refs: list[RunRef] = []
        self._spans = array("Q")  # file, start, stop of each ref's run, by its position
        self._patches: dict[int, RunPatch] = {}
        self._shared: dict[str, str] = {}

    @property
    def path(self) -> str:
        return self.folder.path

    @property
    def files(self) -> list[str]:
        return self.folder.files

    def add(self, run: RunFields, span: Span, patch: RunPatch | None = None) -> RunRef:
        """The run (a trajectory, or its header) as its worker wrote it, then `patch`."""
        self._spans.extend(span)
        self.refs.append(self._ref(run, len(self.refs), patch))
        return self.refs[-1]

    def replace(self, position: int, run: RunFields, patch: RunPatch | None) -> None:
        """The run at `position` (not yet dropped) with another patch."""
        self.refs[position] = self._ref(run, position, patch)

    def drop(self, positions: set[int]) -> None:
        if positions:
            self.refs = [r for r in self.refs if r.position not in positions]

    def _ref(self, run: RunFields, position: int, patch: RunPatch | None) -> RunRef:
        self._patches.pop(position, None)
        if patch is not None:
            self._patches[position] = patch
        run_id = patch.id if patch is not None and patch.id is not None else run.id
        outcome = patch.outcome if patch is not None and patch.outcome is not None else run.outcome
        folder, slash, name = run.source.path.rpartition("/")
        share = self._share
        task = None if run.task_id is None else share(run.task_id)
        after_id = name.startswith(run_id)
        file = share(name[len(run_id) :]) if after_id else name
        return RunRef(
            run_id, task, share(folder) if slash else None, file, after_id,
            share(run.source.format), run.source.index, share(outcome.status), position,
        )  # fmt: skip

    def _share(self, text: str) -> str:
        return self._shared.setdefault(text, text)

    def span(self, ref: RunRef) -> Span:
        return self.span_at(ref.position)

    def span_at(self, position: int) -> Span:
        at = 3 * position
        return self._spans[at], self._spans[at + 1], self._spans[at + 2]

    def patch(self, ref: RunRef) -> RunPatch | None:
        return self._patches.get(ref.position)

    def raw(self, position: int) -> Trajectory:
        """The run at `position` as its worker wrote it, no patch applied."""
        return decode(self.folder.read([self.span_at(position)])[0])

    def load(self, refs: Sequence[RunRef]) -> list[Trajectory]:
        """Runs back from the spill files, by their refs, as the batch decided them."""
        packed = self.folder.read([self.span(r) for r in refs])
        return runs(packed, [self.patch(r) for r in refs])

    def close(self) -> None:
        self.folder.close()
