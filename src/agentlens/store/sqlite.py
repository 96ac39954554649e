"""The default store: one SQLite file (WAL, so a viewer can read while a run writes)."""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentlens.errors import StoreError
from agentlens.store.sql import Dialect, SqlStore

_HEADER = b"SQLite format 3\x00"
BUSY_TIMEOUT_S = 30


@contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
        db.execute("COMMIT")
    except BaseException:
        # SQLite ends the transaction itself on some errors (a full disk): a ROLLBACK then
        # fails, and its error would hide the one that matters
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


DIALECT = Dialect(
    "sqlite", blob="BLOB", float="REAL", placeholder="?", transaction=_transaction,
    error=sqlite3.Error,
)  # fmt: skip


def open_sqlite(path: str | Path) -> SqlStore:
    path = Path(path).expanduser()
    url = str(path)
    _refuse_other_files(path, url)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as exc:
        raise StoreError(url, f"{exc.filename} is a file, not a folder") from exc
    try:
        return _open(path, url, str(path))
    except StoreError:
        if not path.is_file() or _writable(path):
            raise
    # read-only media (or a folder of someone else's): WAL mode needs its -shm file, which
    # cannot be made here; with no unsaved -wal file beside it, the database file alone is the
    # whole store, read as it is now (a writer that starts later is not seen)
    wal = path.with_name(path.name + "-wal")
    if wal.exists() and wal.stat().st_size:
        raise StoreError(url, f"is read-only, and {wal.name} beside it cannot be merged into it")
    return _open(path, url, path.resolve().as_uri() + "?mode=ro&immutable=1", read_only=True)


def _open(path: Path, url: str, target: str, *, read_only: bool = False) -> SqlStore:
    try:
        db = sqlite3.connect(
            target,
            isolation_level=None,
            timeout=BUSY_TIMEOUT_S,
            check_same_thread=False,
            uri=read_only,
        )
    except sqlite3.Error as exc:
        raise StoreError(url, f"cannot open ({exc}){_read_only_folder(path)}") from exc
    try:
        _refuse_other_databases(db, url)  # before WAL mode, which rewrites the file's header
        if not read_only:
            _use_wal(db)
        # SQLite's own LOWER folds ASCII only: the viewer's filter ("ärger" finds "Ärger…")
        # lowercases as Python and Postgres do; no index or constraint uses LOWER
        db.create_function("lower", 1, _lower, deterministic=True)
        db.execute("PRAGMA foreign_keys=ON")
        db.execute("PRAGMA synchronous=NORMAL")
        return SqlStore(url, db, DIALECT)
    except sqlite3.DatabaseError as exc:
        db.close()
        if exc.sqlite_errorname.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
            raise StoreError(url, f"is damaged ({exc}): restore it from a backup") from exc
        raise StoreError(url, f"cannot open ({exc}){_read_only_folder(path)}") from exc
    except BaseException:
        db.close()
        raise


def _use_wal(db: sqlite3.Connection) -> None:
    """Switch to WAL. SQLite does not wait (busy timeout) for the lock this needs, so processes
    opening a new store at the same moment got "database is locked" (4 openers: 4 runs in 40):
    retried, for as long as other statements wait."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorname != "SQLITE_BUSY" or time.monotonic() > deadline:
                raise
            time.sleep(0.005)


def _refuse_other_files(path: Path, url: str) -> None:
    """A folder, a FIFO or device (SQLite would block on a FIFO, or call it a disk error), or a
    file that is not SQLite's (SQLite would write its tables over a file of a few bytes)."""
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return  # a new store (its folder is made next, or named as a file there)
    except OSError as exc:
        raise StoreError(url, f"cannot open ({exc.strerror})") from exc
    if stat.S_ISDIR(mode):
        raise StoreError(url, "is a folder; give a file, e.g. results.db")
    if not stat.S_ISREG(mode):
        raise StoreError(url, "is not a regular file (a FIFO, socket or device); give a file")
    try:
        with path.open("rb") as file:
            header = file.read(len(_HEADER))
    except OSError as exc:
        raise StoreError(url, f"cannot read ({exc.strerror})") from exc
    if header and not header.startswith(_HEADER):
        if _HEADER.startswith(header):
            raise StoreError(url, f"is damaged (cut short at {len(header)} bytes)")
        raise StoreError(url, "not an AgentLens store (not a SQLite database file)")


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def _read_only_folder(path: Path) -> str:
    folder = path.parent
    return f"; its folder {folder} is read-only" if not os.access(folder, os.W_OK) else ""


def _refuse_other_databases(db: sqlite3.Connection, url: str) -> None:
    """Another program's SQLite file is left as it is, not given the store's tables."""
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if tables and "agentlens_migrations" not in tables:
        shown = ", ".join(sorted(tables)[:3]) + (", …" if len(tables) > 3 else "")
        raise StoreError(url, f"not an AgentLens store (a SQLite database with tables {shown})")


def _lower(value: str | bytes | int | float | None) -> str | bytes | int | float | None:
    return value.lower() if isinstance(value, str) else value
