"""Opening the small SQLite files of the provider layer (cache and run ledger)."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def connect(path: Path, *, durable: bool) -> sqlite3.Connection:
    """WAL-mode connection; `durable` makes every commit fsync (synchronous=FULL)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
    conn.execute("PRAGMA busy_timeout=30000")
    return conn
