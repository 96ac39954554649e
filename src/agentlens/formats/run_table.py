"""The `RunRef`s of a batch held as columns, not objects (issue 25).

A cohort of 100k runs kept as 100k small objects (a `RunRef`, its id string, its position) costs
~250 bytes a run, and, made one by one between each file's large transient objects, they pin
the allocator's arenas: resident memory grew by ~600 bytes a run. Here each field is one array
or one byte string for the whole batch (ids and file names as UTF-8 in one buffer; strings many
runs share, such as the task, folder, format and status, as indices into one list): ~130 bytes
a run for these file names, in a few large buffers. A `RunRef` is made when one is asked for.
"""

from __future__ import annotations

from array import array

import msgspec

from agentlens.made_sequence import MadeSequence
from agentlens.trajectory import Outcome, Source

_OUTCOMES: dict[str, Outcome] = {}
NONE = -1
"""A column's "no value" (a run with no task id, no folder, no record index)."""


class RunRef(msgspec.Struct, frozen=True, gc=False):
    """One run of a batch as it waits in a spill file: what grouping it by task, sorting it
    by file name, naming it in a message and finding it again need, and no more."""

    id: str
    task_id: str | None
    folder: str | None
    """The source path up to its last `/` (None: a path without one)."""
    file: str
    """The file name, or, when it starts with the id (`<id>.json`, most readers), what follows
    the id."""
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


class Texts:
    """Strings by number in one UTF-8 buffer (lone surrogates kept: ids may carry them)."""

    def __init__(self) -> None:
        self._data = bytearray()
        self._ends = array("Q")

    def append(self, text: str) -> None:
        self._data += text.encode("utf-8", "surrogatepass")
        self._ends.append(len(self._data))

    def __getitem__(self, number: int) -> str:
        start = self._ends[number - 1] if number else 0
        return self._data[start : self._ends[number]].decode("utf-8", "surrogatepass")


class RunTable:
    """Every run's `RunRef` fields by position, as columns; `ref(position)` makes one."""

    def __init__(self) -> None:
        self._ids = Texts()
        self._names = Texts()  # the file name when it does not start with the id, else ""
        self._strings: list[str] = []
        self._numbers: dict[str, int] = {}
        self._task = array("i")
        self._folder = array("i")
        self._suffix = array("i")  # what follows the id in the file name, or NONE
        self._format = array("i")
        self._status = array("i")
        self._index = array("q")
        self._renamed: dict[int, RunRef] = {}  # runs the batch gave another id: a few

    def __len__(self) -> int:
        return len(self._task)

    def add(self, ref: RunRef) -> None:
        """`ref`, at position `len(self)`."""
        number = self._number
        self._ids.append(ref.id)
        self._names.append("" if ref.after_id else ref.file)
        self._task.append(NONE if ref.task_id is None else number(ref.task_id))
        self._folder.append(NONE if ref.folder is None else number(ref.folder))
        self._suffix.append(number(ref.file) if ref.after_id else NONE)
        self._format.append(number(ref.format))
        self._status.append(number(ref.status))
        self._index.append(NONE if ref.index is None else ref.index)

    def replace(self, ref: RunRef) -> None:
        """The run at `ref.position` as `ref`: its outcome in place, or, renamed, kept whole."""
        self._renamed.pop(ref.position, None)
        if ref.id != self._ids[ref.position]:
            self._renamed[ref.position] = ref
        self._status[ref.position] = self._number(ref.status)

    def ref(self, position: int) -> RunRef:
        if position in self._renamed:
            return self._renamed[position]
        text = self._string
        suffix = self._suffix[position]
        return RunRef(
            self._ids[position], text(self._task[position]), text(self._folder[position]),
            self._names[position] if suffix == NONE else self._strings[suffix], suffix != NONE,
            self._strings[self._format[position]], _value(self._index[position]),
            self._strings[self._status[position]], position,
        )  # fmt: skip

    def id_at(self, position: int) -> str:
        renamed = self._renamed.get(position)
        return renamed.id if renamed is not None else self._ids[position]

    def _number(self, text: str) -> int:
        if text not in self._numbers:
            self._numbers[text] = len(self._strings)
            self._strings.append(text)
        return self._numbers[text]

    def _string(self, number: int) -> str | None:
        return None if number == NONE else self._strings[number]


def _value(number: int) -> int | None:
    return None if number == NONE else number


class Refs(MadeSequence[int, RunRef]):
    """The refs of the runs kept (in the batch's order), each made when it is asked for."""

    def __init__(self, table: RunTable, positions: array[int]) -> None:
        super().__init__(positions, table.ref)
