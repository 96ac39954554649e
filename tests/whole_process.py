"""`agentlens` run as a user runs it: a whole process of this checkout's source, output
captured, so a test sees the exit code and every line a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")


def agentlens(
    *args: str, timeout: float = 60, env: dict[str, str] | None = None, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m agentlens ARGS`; `env` adds to (or overrides) this process's environment;
    `input`, when given, is what it reads on stdin."""
    return subprocess.run(
        [sys.executable, "-m", "agentlens", *args],
        capture_output=True,
        text=True,
        env=_env(env),
        timeout=timeout,
        input=input,
    )


def started(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """`python -m agentlens ARGS` running, in a process group of its own (a terminal's
    foreground job, which Ctrl-C signals whole), its stdin a pipe left open (a user who has
    not answered yet) and its stdout and stderr pipes."""
    return subprocess.Popen(
        [sys.executable, "-m", "agentlens", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(env),
        start_new_session=True,
    )


def _env(env: dict[str, str] | None) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": SRC, **(env or {})}
