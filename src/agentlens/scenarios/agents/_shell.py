"""Running an agent's command in its workspace: a clean environment, a timeout, and no process
left behind.

Output goes to files, not pipes: a background child that keeps a pipe open would otherwise make
waiting for end-of-output outlast any timeout. When the command ends, times out or is cancelled
(a turn timeout cancels the turn), its whole process group is killed, and with it the sandbox's
PID namespace, so the background jobs it started die with it, `setsid` ones included."""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from agentlens.redaction import CUT_MARGIN
from agentlens.verification import disk_guard, isolation, memory_group
from agentlens.verification.disk_guard import DiskFloor
from agentlens.verification.memory_group import MemoryGroup
from agentlens.verification.sandbox import clean_env, kept_tail, kill_group
from agentlens.verification.stop_rule import crossed_limit, stop_note

KEPT_OUTPUT_BYTES = 1_000_000


@dataclass
class ShellResult:
    returncode: int | None
    output: str
    timed_out: bool
    # AgentLens's line when it killed the command for the disk or its memory, or never started
    # it: not the command's output, which the model and the judge read as the program's words
    stopped: str = ""
    # AgentLens's own notes on how it ran (`--no-sandbox`), kept out of `output` as `stopped` is
    notes: str = ""


async def run_process(
    argv: Sequence[str],
    cwd: Path,
    *,
    timeout_s: float | None,
    env: Mapping[str, str] | None = None,
    stdout_path: Path | None = None,
    writable: Sequence[Path] = (),
    readable: Sequence[Path] = (),
) -> tuple[ShellResult, str]:
    """Run `argv` isolated (`isolation.isolate`): it can write only in `cwd`'s parent (the
    workspace and its home) and `writable`. With `stdout_path`, stdout goes to that file and
    stderr is returned apart; without, both are merged into `ShellResult.output`. Killed for
    the disk or its memory, or never started: `ShellResult.stopped` says so, not the output."""
    home = env.get("HOME") if env else None
    policy = isolation.current()
    async with contextlib.AsyncExitStack() as held:  # the group is removed last, once all is gone
        group = memory_group.make(policy.limits.memory_mb)
        # in a thread: removing a group waits for its processes to go (`memory_group._remove`)
        held.push_async_callback(asyncio.to_thread, group.remove)
        wrapped = isolation.isolate(
            argv,
            workdir=cwd,
            writable=[cwd.parent, *writable],
            isolation=policy,
            memory=group,
            home=Path(home) if home else None,
            readable=readable,
        )
        floor = DiskFloor.at_start(cwd.parent, policy.limits)
        out = held.enter_context(_output_file(stdout_path))
        err = out if stdout_path is None else held.enter_context(_output_file(None))
        try:
            proc = await asyncio.create_subprocess_exec(
                *wrapped.argv,
                cwd=cwd,
                env=dict(env) if env is not None else None,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
        except OSError as exc:
            why = isolation.not_started(exc, argv)
            return ShellResult(None, "", False, stopped=why, notes=wrapped.warning), ""
        timed_out, stopped = False, ""
        try:
            stopped = await asyncio.wait_for(_guarded(proc, floor, group), timeout_s)
        except TimeoutError:
            timed_out = True
        finally:  # ended, timed out or cancelled: nothing it started may outlive it
            kill_group(proc.pid)
            await _reap(proc)
        code = None if timed_out else proc.returncode
        stderr = "" if err is out else _read(err)
        output = _read(out) if stdout_path is None else ""
        not_started = group.not_started_note(code)
        if not_started:  # nothing ran: no output, no exit code
            return ShellResult(None, "", False, stopped=not_started, notes=wrapped.warning), ""
        why = stop_note(stopped, group, timed_out=timed_out)
        return ShellResult(code, output, timed_out, stopped=why, notes=wrapped.warning), stderr


async def run_shell(command: str, cwd: Path, *, timeout_s: float) -> ShellResult:
    """A model-written command, under `bash -c`, with secrets kept out of its environment."""
    home = cwd.parent / "home"
    home.mkdir(exist_ok=True)
    result, _ = await run_process(
        ["bash", "-c", command], cwd, timeout_s=timeout_s, env=clean_env(home)
    )
    return result


async def _guarded(proc: asyncio.subprocess.Process, floor: DiskFloor, group: MemoryGroup) -> str:
    """Waits for the command to end: "", or the note of the limit it crossed as soon as it
    crosses the disk `floor` or the memory of its `group` (the caller kills it)."""
    ended = asyncio.ensure_future(proc.wait())
    try:
        while not ended.done():
            await asyncio.wait({ended}, timeout=disk_guard.POLL_S)
            if ended.done():
                break
            if crossed := crossed_limit([floor], group):
                return crossed
        return ""
    finally:
        ended.cancel()


def _output_file(path: Path | None) -> IO[bytes]:
    if path is None:
        return tempfile.TemporaryFile()
    path.parent.mkdir(parents=True, exist_ok=True)
    return isolation.reclaim(path).open("w+b")


async def _reap(proc: asyncio.subprocess.Process) -> None:
    """Wait for the killed child even when cancelled meanwhile (else its transport warns at
    exit); a cancellation that arrives here is passed on once the child is gone."""
    waiting = asyncio.ensure_future(proc.wait())
    try:
        await asyncio.shield(waiting)
    except asyncio.CancelledError:
        await waiting
        raise


def _read(handle: IO[bytes]) -> str:
    """The last `KEPT_OUTPUT_BYTES` of it: a command may print gigabytes, and the end (the
    error, the test summary) is what matters. Masked before the cut (`redaction.masked_tail`),
    so `CUT_MARGIN` more is read: a key whose start the cut took would go out as its end."""
    size = handle.seek(0, os.SEEK_END)
    if size <= KEPT_OUTPUT_BYTES:
        handle.seek(0)
        return _decoded(handle.read())
    handle.seek(max(0, size - KEPT_OUTPUT_BYTES - CUT_MARGIN))
    return kept_tail(handle.read(), KEPT_OUTPUT_BYTES, size, _decoded)


def _decoded(output: bytes) -> str:
    return output.decode("utf-8", errors="replace")
