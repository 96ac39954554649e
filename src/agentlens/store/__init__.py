"""The results store: every scoring, review and import run, with its records and the trajectories
they are about (content-addressed). `open_store(url)` takes a file path or `sqlite:///path` for
SQLite, or `postgresql://…` for Postgres."""

from __future__ import annotations

import os
from pathlib import Path

from agentlens.errors import StoreError
from agentlens.store.content import digest
from agentlens.store.model import Metric, Record, Run
from agentlens.store.postgres import open_postgres, without_password
from agentlens.store.sql import SqlStore
from agentlens.store.sqlite import open_sqlite

__all__ = [
    "Metric", "Record", "Run", "SqlStore", "default_url", "digest", "open_store", "printable_url",
]  # fmt: skip

_POSTGRES = ("postgresql://", "postgres://")


def default_url() -> str:
    """`$AGENTLENS_STORE`, else `agentlens.db` in the user's data folder."""
    if os.environ.get("AGENTLENS_STORE"):
        return os.environ["AGENTLENS_STORE"]
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return str(base / "agentlens" / "agentlens.db")


def open_store(url: str | None = None, *, create: bool = True) -> SqlStore:
    """`create=False` for commands that only read: a SQLite path that does not exist is then an
    error naming the fix, not a new empty store that hides a mistyped path."""
    url = url or default_url()
    if url.startswith(_POSTGRES):
        return open_postgres(url)
    if url.startswith("sqlite:///"):
        url = url.removeprefix("sqlite:///")  # as in SQLAlchemy: a 4th slash makes it absolute
    path = Path(url).expanduser()
    if not create and (not path.exists() or (path.is_file() and not path.stat().st_size)):
        # an empty file is no store either: reading it must not write the tables into it
        raise StoreError(
            url,
            f"{'no such file' if not path.exists() else 'an empty file, not a store yet'}; "
            "`agentlens store import PATHS --store FILE` (or `score … --store FILE`) creates one",
        )
    return open_sqlite(url)


def printable_url(url: str) -> str:
    """A store URL as it may be printed: a Postgres password is shown as `***`."""
    if not url.startswith(_POSTGRES):
        return url
    return without_password(url)
