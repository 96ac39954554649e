"""The team store: a Postgres database, through psycopg 3 (`pip install 'agentlens[postgres]'`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit, urlunsplit

from agentlens.errors import MissingDependencyError, StoreError
from agentlens.store.sql import Dialect, SqlStore

# Any fixed number: every AgentLens process writing to one database takes the same lock, a
# migration alone, any other write shared (writes run at once; saves keep clear of each other by
# their row order, see `SqlStore._insert_trajectories`). An older AgentLens took it alone for
# every write: its saves still wait for, and are waited for by, every other writer.
_MIGRATION_LOCK = 0x616C656E


@contextmanager
def _transaction(db: Any) -> Iterator[None]:
    with db.transaction():
        db.execute("SELECT pg_advisory_xact_lock_shared(%s)", (_MIGRATION_LOCK,))
        yield


@contextmanager
def _migration(db: Any) -> Iterator[None]:
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
        transaction=_transaction, error=psycopg.Error, nul_in_text=False, migration=_migration,
    )  # fmt: skip
    shown = without_password(url)
    try:
        db = psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise StoreError(shown, f"cannot connect ({_scrub(first, url)})") from exc
    try:
        return SqlStore(shown, db, dialect)
    except BaseException:
        db.close()
        raise


def without_password(url: str) -> str:
    """The URL as it may be printed: a password, in the user part or as a `password=` query
    parameter (libpq takes both), is shown as `***`."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        if ":" in user:
            netloc = f"{user.split(':', 1)[0]}:***@{host}"
    query = "&".join(
        f"{name}=***" if unquote(name).strip().lower() == "password" else f"{name}={value}"
        if sep else name
        for name, sep, value in (pair.partition("=") for pair in parts.query.split("&") if pair)
    )  # fmt: skip
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def _scrub(message: str, url: str) -> str:
    """A driver message that quotes the connection string (a malformed one) without its
    password."""
    parts = urlsplit(url)
    secrets = [parts.password] if parts.password else []
    secrets += [v for k, v in parse_qsl(parts.query) if k.strip().lower() == "password" and v]
    for secret in secrets:
        message = message.replace(secret, "***").replace(quote(secret, safe=""), "***")
    return message
