"""The team store: a Postgres database, through psycopg 3 (`pip install 'agentlens[postgres]'`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from agentlens.errors import MissingDependencyError, StoreError
from agentlens.store.sql import Dialect, SqlStore

# Any fixed number: every AgentLens process migrating one database takes the same lock.
_MIGRATION_LOCK = 0x616C656E


@contextmanager
def _transaction(db: Any) -> Iterator[None]:
    with db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        yield


def open_postgres(url: str) -> SqlStore:
    try:
        import psycopg
    except ImportError as exc:
        raise MissingDependencyError("a Postgres store", "postgres", "psycopg") from exc
    dialect = Dialect(
        "postgres", blob="BYTEA", float="DOUBLE PRECISION", placeholder="%s",
        transaction=_transaction, error=psycopg.Error,
    )  # fmt: skip
    shown = _without_password(url)
    try:
        db = psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        raise StoreError(shown, f"cannot connect ({str(exc).strip().splitlines()[0]})") from exc
    return SqlStore(shown, db, dialect)


def _without_password(url: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))
