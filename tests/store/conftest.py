"""Every store test runs on SQLite and on a real PostgreSQL server (started once per session)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentlens.store import SqlStore, open_store
from tests.cli.conftest import run_cli  # noqa: F401  (the fixture)
from tests.store.postgres_server import bindir, fresh_database, postgres_server

_names = itertools.count()


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    missing = (
        "no PostgreSQL server binaries (apt-get install postgresql)" if bindir() is None else ""
    )
    try:
        import psycopg  # noqa: F401
    except ImportError:
        missing = "psycopg is not installed (pip install 'agentlens[postgres]')"
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the Postgres tests: {missing}")
        pytest.skip(missing)
    with postgres_server() as url:
        yield url


def new_store_url(request: pytest.FixtureRequest, folder: Path) -> str:
    """An empty store on the backend `request.param` names (a file in `folder` for SQLite)."""
    if request.param == "sqlite":
        return str(folder / "results.db")
    server: str = request.getfixturevalue("postgres_url")
    return fresh_database(server, f"agentlens_test_{os.getpid()}_{next(_names)}")


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return new_store_url(request, tmp_path)


@pytest.fixture
def store(store_url: str) -> Iterator[SqlStore]:
    with open_store(store_url) as opened:
        yield opened
