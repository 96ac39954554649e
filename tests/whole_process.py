"""`agentlens` run as a user runs it: a whole process of this checkout's source, output
captured, so a test sees the exit code and every line a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")


def agentlens(
    *args: str, timeout: float = 60, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m agentlens ARGS`; `env` adds to (or overrides) this process's environment."""
    full = {**os.environ, "PYTHONPATH": SRC, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "agentlens", *args],
        capture_output=True,
        text=True,
        env=full,
        timeout=timeout,
    )
