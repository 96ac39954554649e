"""A real, throwaway PostgreSQL server for the store tests: `initdb` into a temporary folder,
listening on 127.0.0.1 only, trust auth, stopped when the session ends. Root cannot run
postgres, so as root the cluster belongs to the `postgres` system user."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def bindir() -> Path | None:
    found = shutil.which("pg_ctl")
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for folder in ([str(Path(found).resolve().parent)] if found else []) + candidates:
        if (Path(folder) / "initdb").exists() and (Path(folder) / "postgres").exists():
            return Path(folder)
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _as_owner(argv: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


@contextmanager
def postgres_server() -> Iterator[str]:
    """Yield the URL of a fresh server's `postgres` database."""
    bins = bindir()
    assert bins is not None
    root = Path(tempfile.mkdtemp(prefix="agentlens-pg-"))
    data = root / "data"
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
    port = _free_port()

    def run(*argv: str) -> None:
        subprocess.run(
            _as_owner([str(bins / argv[0]), *argv[1:]]),
            check=True,
            capture_output=True,
            timeout=120,
        )

    run("initdb", "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
    run(
        "pg_ctl", "-D", str(data), "-l", str(root / "log"), "-w", "-t", "60", "start",
        "-o", f"-h 127.0.0.1 -p {port} -k {root} -c fsync=off -c full_page_writes=off",
    )  # fmt: skip
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        run("pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)


def fresh_database(server_url: str, name: str) -> str:
    """A new empty database on the server; its URL."""
    import psycopg

    with psycopg.connect(server_url, autocommit=True) as db:
        db.execute(f'DROP DATABASE IF EXISTS "{name}"')
        db.execute(f'CREATE DATABASE "{name}"')
    return server_url.rsplit("/", 1)[0] + "/" + name
