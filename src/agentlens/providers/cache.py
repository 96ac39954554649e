"""Response cache: a SQLite table keyed by the hash of (backend, model, full request).

A re-run of an evaluation with the same requests makes zero model calls. Keys are content
hashes; stored values are the decoded responses (never a request header, so never an API key).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from agentlens.errors import ConfigError
from agentlens.providers._sqlite import connect

SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    kind TEXT NOT NULL,
    payload BLOB NOT NULL,
    created_at REAL NOT NULL,
    hits INTEGER NOT NULL DEFAULT 0
)
"""


def default_cache_path() -> Path:
    """`$AGENTLENS_LLM_CACHE`, else `$XDG_CACHE_HOME/agentlens/llm-cache.sqlite`."""
    explicit = os.environ.get("AGENTLENS_LLM_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "agentlens" / "llm-cache.sqlite"


@dataclass(frozen=True)
class CacheStats:
    path: str
    entries: int
    hits: int
    size_bytes: int
    by_provider: dict[str, int]


class ResponseCache:
    """Thread-safe get/put of encoded responses by request key."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path).expanduser() if path else default_cache_path()
        self._lock = threading.Lock()
        try:
            self._conn = connect(self.path, durable=False)
            self._conn.execute(SCHEMA)
        except sqlite3.DatabaseError as exc:  # overwritten or cut short: not our bug, one line
            raise ConfigError(
                f"{self.path}: not an LLM response cache ({exc}); it holds only cached answers, "
                "so delete it, or set $AGENTLENS_LLM_CACHE to another file"
            ) from exc

    @classmethod
    def existing(cls, path: str | Path | None = None) -> ResponseCache:
        """The cache at `path` if there is one; for commands that read or clear it, where making
        an empty one at a mistyped path would report "0 entries" instead of the mistake."""
        target = Path(path).expanduser() if path else default_cache_path()
        if not target.exists():
            raise ConfigError(
                f"{target}: no LLM response cache there (no such file); check llm.cache or "
                "$AGENTLENS_LLM_CACHE"
            )
        return cls(target)

    def get(self, key: str) -> bytes | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT payload FROM responses WHERE key = ?", (key,)
            ).fetchone()
            if row is None:
                return None
            self._conn.execute("UPDATE responses SET hits = hits + 1 WHERE key = ?", (key,))
            return bytes(row[0])

    def put(self, key: str, provider: str, kind: str, payload: bytes) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses (key, provider, kind, payload, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (key, provider, kind, payload, time.time()),
            )

    def stats(self) -> CacheStats:
        with self._lock:
            entries, hits = self._conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(hits), 0) FROM responses"
            ).fetchone()
            rows = self._conn.execute(
                "SELECT provider, COUNT(*) FROM responses GROUP BY provider ORDER BY provider"
            ).fetchall()
        size = sum(p.stat().st_size for p in self._files() if p.exists())
        return CacheStats(str(self.path), entries, hits, size, dict(rows))

    def clear(self) -> int:
        """Delete every entry; returns how many were removed."""
        with self._lock:
            removed = self._conn.execute("DELETE FROM responses").rowcount
            self._conn.execute("VACUUM")
        return int(removed)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _files(self) -> list[Path]:
        return [self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm")]
