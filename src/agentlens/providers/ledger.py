"""Run ledger: every completed call is durably recorded before its result is used.

SQLite in WAL mode with synchronous=FULL, so a commit has reached the disk when `record` returns.
A killed run restarted with the same `run_id` finds its finished calls here and neither repeats
nor re-pays for them. Rows hold the response and its cost, never request headers or keys.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

from agentlens.providers._sqlite import connect
from agentlens.providers.types import TokenUsage

SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    run_id TEXT NOT NULL,
    key TEXT NOT NULL,
    role TEXT NOT NULL,
    provider TEXT NOT NULL,
    kind TEXT NOT NULL,
    payload BLOB NOT NULL,
    cost REAL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cached_tokens INTEGER NOT NULL,
    recorded_at REAL NOT NULL,
    PRIMARY KEY (run_id, key)
)
"""


@dataclass(frozen=True)
class RoleTotals:
    role: str
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    cost: float


class RunLedger:
    """Durable record of the completed calls of one run (`run_id`)."""

    def __init__(self, path: str | Path, run_id: str) -> None:
        self.path = Path(path).expanduser()
        self.run_id = run_id
        self._lock = threading.Lock()
        self._conn = connect(self.path, durable=True)
        self._conn.execute(SCHEMA)

    def get(self, key: str) -> bytes | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT payload FROM calls WHERE run_id = ? AND key = ?", (self.run_id, key)
            ).fetchone()
        return None if row is None else bytes(row[0])

    def record(
        self,
        key: str,
        *,
        role: str,
        provider: str,
        kind: str,
        payload: bytes,
        cost: float | None,
        usage: TokenUsage,
    ) -> None:
        """Insert one completed call; returns only after the commit is on disk."""
        with self._lock:
            self._conn.execute(
                "INSERT OR IGNORE INTO calls VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    self.run_id,
                    key,
                    role,
                    provider,
                    kind,
                    payload,
                    cost,
                    usage.prompt_tokens,
                    usage.completion_tokens,
                    usage.cached_tokens,
                    time.time(),
                ),
            )

    def count(self) -> int:
        with self._lock:
            (n,) = self._conn.execute(
                "SELECT COUNT(*) FROM calls WHERE run_id = ?", (self.run_id,)
            ).fetchone()
        return int(n)

    def totals_by_role(self) -> list[RoleTotals]:
        """Calls, tokens and dollars of this run, one row per role."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT role, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens),"
                " SUM(cached_tokens), COALESCE(SUM(cost), 0) FROM calls WHERE run_id = ?"
                " GROUP BY role ORDER BY role",
                (self.run_id,),
            ).fetchall()
        return [RoleTotals(*row) for row in rows]

    def close(self) -> None:
        with self._lock:
            self._conn.close()
