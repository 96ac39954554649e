"""Running an agent's command in its workspace: a clean environment, a timeout, and a kill of the
whole process group when the run is cancelled (a turn timeout cancels the turn)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentlens.reviews.sandbox import clean_env


@dataclass
class ShellResult:
    returncode: int | None
    output: str
    timed_out: bool


async def run_process(
    argv: Sequence[str],
    cwd: Path,
    *,
    timeout_s: float | None,
    env: Mapping[str, str] | None = None,
    merge_stderr: bool = True,
) -> tuple[ShellResult, str]:
    """Run `argv`; return its result and (unless merged) its stderr. Cancellation kills it."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=dict(env) if env is not None else None,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT if merge_stderr else asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout_s)
    except TimeoutError:
        _kill(proc)
        out, err = await proc.communicate()
        return ShellResult(None, _text(out), True), _text(err)
    except asyncio.CancelledError:
        _kill(proc)
        await proc.communicate()  # reaped before the loop closes, or its transport warns at exit
        raise
    return ShellResult(proc.returncode, _text(out), False), _text(err)


async def run_shell(command: str, cwd: Path, *, timeout_s: float) -> ShellResult:
    """A model-written command, under `bash -c`, with secrets kept out of its environment."""
    home = cwd.parent / "home"
    home.mkdir(exist_ok=True)
    result, _ = await run_process(
        ["bash", "-c", command], cwd, timeout_s=timeout_s, env=clean_env(home)
    )
    return result


def _kill(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):  # it already ended
        os.killpg(proc.pid, signal.SIGKILL)


def _text(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")
