"""A batch's runs waiting in spill files, a `RunRef` of each in a table beside them (issue 25).

The workers of a pooled read (`pooled_read`) write the runs they read to their own files in one
`SpillFolder`. Of each run this process writes the fields of a `RunRef` to a SQLite table in the
folder (`run_table`): its id, task, file, format, outcome status and where it lies, all that grouping
runs by task, naming a run in a message and finding it again need; and, for a run the batch
changed after its worker wrote it (a new id, an outcome from a sidecar or `--labels`), a
`RunPatch`, applied whenever the run is read back (`RunSpill.load`, `runs`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from array import array
from collections.abc import Iterable, Iterator, Sequence

import msgspec

from agentlens.formats._batch_ids import _rename
from agentlens.formats._spill_codec import decode
from agentlens.formats._spool import read_spans
from agentlens.formats.run_table import Refs, RunFields, RunRef, RunTable, Span
from agentlens.trajectory import Outcome, Trajectory

__all__ = ["RunFields", "RunPatch", "RunRef", "RunSpill", "Span"]


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


class RunSpill:
    """The runs of a batch in the workers' spill files, a `RunRef` of each in the batch's order,
    and the patches of the runs the batch changed; the files are removed on `close`."""

    def __init__(self) -> None:
        self.folder = SpillFolder()
        try:
            self.table = RunTable(self.folder.path)
        except BaseException:  # the folder was made: it goes with the failure
            self.folder.close()
            raise
        self._kept = array("I")  # the positions of the runs kept, in order
        self._patches: dict[int, RunPatch] = {}

    @property
    def refs(self) -> Refs:
        """A `RunRef` of each run kept, in the batch's order (made as each is asked for)."""
        return Refs(self.table, self._kept)

    @property
    def path(self) -> str:
        return self.folder.path

    @property
    def files(self) -> list[str]:
        return self.folder.files

    def add(
        self, run: RunFields, span: Span, patch: RunPatch | None = None, size: int | None = None
    ) -> RunRef:
        """The run (a trajectory, or its header) as its worker wrote it, then `patch`; `size`:
        its file's, when the run is a file's (found by the batch's walk)."""
        position = len(self.table)
        ref = self._ref(run, position, patch, size)
        self.table.add(ref, span)
        self._kept.append(position)
        return ref

    def replace(self, position: int, run: RunFields, patch: RunPatch | None) -> None:
        """The run at `position` (not yet dropped) with another patch."""
        self.table.replace(self._ref(run, position, patch))

    def drop(self, positions: set[int]) -> None:
        if positions:
            self._kept = array("I", (p for p in self._kept if p not in positions))
            self.table.drop(positions)

    def _ref(
        self, run: RunFields, position: int, patch: RunPatch | None, size: int | None = None
    ) -> RunRef:
        self._patches.pop(position, None)
        if patch is not None:
            self._patches[position] = patch
        run_id = patch.id if patch is not None and patch.id is not None else run.id
        outcome = patch.outcome if patch is not None and patch.outcome is not None else run.outcome
        folder, slash, name = run.source.path.rpartition("/")
        after_id = name.startswith(run_id)
        return RunRef(
            run_id, run.task_id, folder if slash else None,
            name[len(run_id) :] if after_id else name, after_id, run.source.format,
            run.source.index, outcome.status, position, size,
        )  # fmt: skip

    def walk(self) -> Iterator[tuple[RunRef, Span]]:
        """The ref of each run kept, in the batch's order, with where it lies (`RunTable.walk`)."""
        return self.table.walk(self._kept)

    def span(self, ref: RunRef) -> Span:
        return self.span_at(ref.position)

    def span_at(self, position: int) -> Span:
        return self.table.span(position)

    def patch(self, ref: RunRef) -> RunPatch | None:
        return self._patches.get(ref.position)

    def patch_at(self, position: int) -> RunPatch | None:
        return self._patches.get(position)

    def raw(self, position: int) -> Trajectory:
        """The run at `position` as its worker wrote it, no patch applied."""
        return decode(self.folder.read([self.span_at(position)])[0])

    def load(self, refs: Sequence[RunRef]) -> list[Trajectory]:
        """Runs back from the spill files, by their refs, as the batch decided them."""
        return self.load_at([r.position for r in refs])

    def load_at(self, positions: Sequence[int]) -> list[Trajectory]:
        """`load` by the runs' positions."""
        packed = self.folder.read([self.span_at(p) for p in positions])
        return runs(packed, [self.patch_at(p) for p in positions])

    def close(self) -> None:
        self.table.close()
        self.folder.close()
