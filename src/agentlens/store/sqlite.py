"""The default store: one SQLite file (WAL, so a viewer can read while a run writes)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentlens.errors import StoreError
from agentlens.store.sql import Dialect, SqlStore


@contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


DIALECT = Dialect(
    "sqlite", blob="BLOB", float="REAL", placeholder="?", transaction=_transaction,
    error=sqlite3.Error,
)  # fmt: skip


def open_sqlite(path: str | Path) -> SqlStore:
    path = Path(path).expanduser()
    url = str(path)
    if path.is_dir():
        raise StoreError(url, "is a folder; give a file, e.g. results.db")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        db = sqlite3.connect(path, isolation_level=None, timeout=30, check_same_thread=False)
    except sqlite3.Error as exc:
        raise StoreError(url, f"cannot open ({exc})") from exc
    try:
        _refuse_other_databases(db, url)  # before WAL mode, which rewrites the file's header
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA foreign_keys=ON")
        db.execute("PRAGMA synchronous=NORMAL")
        return SqlStore(url, db, DIALECT)
    except sqlite3.DatabaseError as exc:
        db.close()
        raise StoreError(url, f"not an AgentLens store ({exc})") from exc
    except BaseException:
        db.close()
        raise


def _refuse_other_databases(db: sqlite3.Connection, url: str) -> None:
    """Another program's SQLite file is left as it is, not given the store's tables."""
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if tables and "agentlens_migrations" not in tables:
        shown = ", ".join(sorted(tables)[:3]) + (", …" if len(tables) > 3 else "")
        raise StoreError(url, f"not an AgentLens store (a SQLite database with tables {shown})")
