"""The `RunRef`s of a batch in a SQLite table beside its spill files, not in memory (issue 25).

A cohort of 100k runs kept in memory, even as columns (~150 bytes a run: id, file name, task,
outcome, place in the spill files), grows with the corpus; in a table on disk it does not: the
process keeps a page cache of a few MiB whatever the corpus. The table also groups the runs by
task and finds the ids two runs share, which a cohort needs once the read is done. A `RunRef` is
made when one is asked for. Text goes in as UTF-8 bytes with lone surrogates kept (a file name
read from disk may carry them), so every id and path comes back as it went in.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from array import array
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

import msgspec

from agentlens.made_sequence import MadeSequence
from agentlens.trajectory import Outcome, Source

_OUTCOMES: dict[str, Outcome] = {}
Span = tuple[int, int, int]
"""(spill file number, start, stop) of an encoded trajectory."""


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


def task_key(run: RunFields) -> str:
    """The run's `task_id`, else its file's folder name (how a cohort groups runs by task)."""
    return run.task_id or Path(run.source.path).parent.name or "unknown-task"


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
    size: int | None = None
    """The size of the file at `source.path` when the batch found it; None: not known (the
    run's path is not the file walked, or the batch did not walk it)."""

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


_SCHEMA = """
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
PRAGMA cache_size = -2048;
CREATE TABLE runs (
    position INTEGER PRIMARY KEY, id BLOB, task_id BLOB, folder BLOB, file BLOB,
    after_id INTEGER, format BLOB, idx INTEGER, status BLOB,
    spill INTEGER, start INTEGER, stop INTEGER, task BLOB, kept INTEGER DEFAULT 1, size INTEGER
);
"""
_FIELDS = "id, task_id, folder, file, after_id, format, idx, status, position, size"
_WAITING = 4096
"""Rows written in one transaction (a commit a run costs ~10 µs)."""


class RunTable:
    """Every run's `RunRef` fields and spill span by position, in `folder`/runs.sqlite."""

    def __init__(self, folder: str) -> None:
        self.path = os.path.join(folder, "runs.sqlite")
        with self._errors():  # no locking: the file is this connection's alone (and NFS lacks it)
            self._db = sqlite3.connect(
                f"file:{quote(self.path)}?nolock=1", uri=True, check_same_thread=False
            )
            self._db.executescript(_SCHEMA)
        self._waiting: list[tuple[object, ...]] = []
        self._length = 0
        self._grouped = False

    def __len__(self) -> int:
        return self._length

    def add(self, ref: RunRef, span: Span) -> None:
        """`ref` (at position `len(self)`) and where its run lies."""
        self._waiting.append((*_row(ref), *span, _text(task_key(ref)), ref.size))
        self._length += 1
        if len(self._waiting) >= _WAITING:
            self._write()

    def replace(self, ref: RunRef) -> None:
        """The run at `ref.position` as `ref` (another id, another outcome; its file's size
        stays the one it was added with)."""
        self._write()
        values = _row(ref)
        with self._errors():
            self._db.execute(
                "UPDATE runs SET id=?, task_id=?, folder=?, file=?, after_id=?, format=?, idx=?, "
                "status=?, task=? WHERE position=?",
                (*values[:-1], _text(task_key(ref)), ref.position),
            )

    def drop(self, positions: Iterable[int]) -> None:
        self._write()
        with self._errors():
            self._db.executemany(
                "UPDATE runs SET kept=0 WHERE position=?", ((p,) for p in positions)
            )

    def ref(self, position: int) -> RunRef:
        return _ref(self._one(f"SELECT {_FIELDS} FROM runs WHERE position=?", position))

    def id_at(self, position: int) -> str:
        return _str(self._one("SELECT id FROM runs WHERE position=?", position)[0])

    def span(self, position: int) -> Span:
        spill, start, stop = self._one(
            "SELECT spill, start, stop FROM runs WHERE position=?", position
        )
        return spill, start, stop

    def walk(self, positions: Sequence[int]) -> Iterator[tuple[RunRef, Span]]:
        """The ref and span of the run at each of `positions` (ascending, as a spill keeps
        them), row by row from one query over their range: not a query a run (~10 µs each).
        A run added meanwhile lies past the range; one replaced is given as it was read."""
        if not positions:
            return
        self._write()
        with self._errors():
            rows = self._db.execute(
                f"SELECT {_FIELDS}, spill, start, stop FROM runs "
                "WHERE position BETWEEN ? AND ? ORDER BY position",
                (positions[0], positions[-1]),
            )
            yield from _matched(positions, rows)

    def same_ids(self) -> list[list[int]]:
        """Positions that share an id, one list per id, ordered by their first position."""
        self._write()
        found: dict[bytes, list[int]] = {}
        with self._errors():
            rows = self._db.execute(
                "SELECT id, position FROM runs WHERE id IN "
                "(SELECT id FROM runs GROUP BY id HAVING count(*) > 1) ORDER BY position"
            ).fetchall()
        for run_id, position in rows:
            found.setdefault(run_id, []).append(position)
        return list(found.values())

    def tasks(self) -> list[str]:
        """The task (`task_key`) of each run kept, each once."""
        self._group()
        with self._errors():
            tasks = self._db.execute("SELECT DISTINCT task FROM runs WHERE kept").fetchall()
        return [_str(task) for (task,) in tasks]

    def task_refs(self, task: str) -> list[RunRef]:
        """The kept runs of `task`, in position order."""
        self._group()
        with self._errors():
            rows = self._db.execute(
                f"SELECT {_FIELDS} FROM runs WHERE task=? AND kept ORDER BY position",
                (_text(task),),
            ).fetchall()
        return [_ref(row) for row in rows]

    def close(self) -> None:
        self._db.close()

    def _group(self) -> None:
        if not self._grouped:
            self._write()
            with self._errors():
                self._db.execute("CREATE INDEX runs_by_task ON runs (task, position)")
            self._grouped = True

    def _one(self, query: str, position: int) -> tuple[Any, ...]:
        self._write()
        with self._errors():
            row = self._db.execute(query, (position,)).fetchone()
        if row is None:
            raise IndexError(position)
        return row

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """SQLite's errors (a full disk, a folder gone) as the file's, one line naming it: what
        a full disk under the spill files says too, not an internal error."""
        try:
            yield
        except sqlite3.Error as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise OSError(errno.EIO, f"{first} (the cohort's run table)", self.path) from exc

    def _write(self) -> None:
        if self._waiting:
            with self._errors(), self._db:
                self._db.executemany(
                    "INSERT INTO runs (id, task_id, folder, file, after_id, format, idx, status, "
                    "position, spill, start, stop, task, size) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    self._waiting,
                )
            self._waiting.clear()


def _matched(
    positions: Sequence[int], rows: Iterable[tuple[Any, ...]]
) -> Iterator[tuple[RunRef, Span]]:
    """The rows (in position order) at `positions`, passing over those of runs not asked for
    (dropped by the batch)."""
    found = iter(rows)
    for position in positions:
        row = next(found, None)
        while row is not None and row[8] != position:
            row = next(found, None)
        if row is None:  # not in the table, or `positions` not ascending
            raise IndexError(position)
        yield _ref(row[:10]), (row[10], row[11], row[12])


def _row(ref: RunRef) -> tuple[object, ...]:
    text = _text
    return (text(ref.id), text(ref.task_id), text(ref.folder), text(ref.file), ref.after_id,
            text(ref.format), ref.index, text(ref.status), ref.position)  # fmt: skip


def _ref(row: tuple[Any, ...]) -> RunRef:
    run_id, task_id, folder, file, after_id, format, index, status, position, size = row
    return RunRef(_str(run_id), _maybe(task_id), _maybe(folder), _str(file), bool(after_id),
                  _str(format), index, _str(status), position, size)  # fmt: skip


def _text(text: str | None) -> bytes | None:
    return None if text is None else text.encode("utf-8", "surrogatepass")


def _str(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")


def _maybe(data: bytes | None) -> str | None:
    return None if data is None else _str(data)


class Refs(MadeSequence[int, RunRef]):
    """The refs of the runs kept (in the batch's order), each made when it is asked for; a walk
    over them is one query (`RunTable.walk`)."""

    def __init__(self, table: RunTable, positions: array[int]) -> None:
        super().__init__(positions, table.ref)
        self.table = table

    def __iter__(self) -> Iterator[RunRef]:
        return (ref for ref, _ in self.table.walk(self.keys))
