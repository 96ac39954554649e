"""The stdio transport: a local server started from its entry (`command`, `args`, `env`,
`cwd`), one JSON-RPC message a line; its stderr kept in a log, its whole process group stopped
at the end. It runs sandboxed (`isolation.isolate`): its `cwd` readable, only `writable` (the
scenario's workspace) writable, no network unless the scenario grants it."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import orjson

from agentlens.errors import AgentLensError
from agentlens.scenarios.mcp_client import limits
from agentlens.scenarios.mcp_client._pipes import LineTooLong, ServerPipes
from agentlens.scenarios.mcp_client.session import (
    McpError,
    McpSession,
    json_object,
    one_line,
    reply,
)
from agentlens.verification import disk_guard, isolation, memory_group
from agentlens.verification.disk_guard import DiskFloor
from agentlens.verification.memory_group import MemoryGroup
from agentlens.verification.sandbox import kill_group, toolchain_env
from agentlens.verification.stop_rule import crossed_limit, stop_note


class StdioSession(McpSession):
    """A local server, its stderr kept in `log` (at most `STDERR_LOG_LIMIT` bytes of it)."""

    def __init__(
        self, name: str, spec: dict[str, Any], *, log: Path, writable: Sequence[Path] = ()
    ) -> None:
        super().__init__(name, spec)
        self.log = log
        self.writable = list(writable)  # besides these the sandbox lets it read, not write
        self._pipes: ServerPipes | None = None
        self._log_file: IO[bytes] | None = None
        self._kept = self._dropped = 0  # bytes of its stderr written to the log, and not
        self._stderr_end = b""
        self._junk = 0  # lines on its stdout that are not JSON-RPC messages
        self._last_junk = ""
        self._guard: asyncio.Task[None] | None = None
        self._stop = ""  # why it was stopped for the disk or its memory, once it was
        self._memory: MemoryGroup | None = None
        self._floors: list[DiskFloor] = []  # of the folders it may write

    async def _open(self) -> None:
        command = [str(self.spec["command"]), *map(str, self.spec.get("args", []))]
        cwd = self.spec.get("cwd")
        if cwd is not None and not Path(cwd).is_dir():
            raise self._error(f"did not start: its cwd {one_line(str(cwd), 200)} is not a folder")
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self._log_file = isolation.reclaim(self.log).open("ab")
        pipes = ServerPipes(limits.MESSAGE_LIMIT, self._keep_stderr)
        policy = isolation.current()
        self._floors = floors = [
            DiskFloor.at_start(folder, policy.limits) for folder in self.writable
        ]
        self._memory = memory = memory_group.make(policy.limits.memory_mb)
        try:
            command[0] = _program(command[0], cwd)  # inside the sandbox exec errors lose their name
            wrapped = isolation.isolate(
                command,
                workdir=Path(cwd or "/"),
                writable=self.writable,
                isolation=policy,
                memory=memory,
                readable=_named_folders(command, cwd),
            )
            await asyncio.get_running_loop().subprocess_exec(
                lambda: pipes,
                *wrapped.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**_server_env(), **self.spec.get("env", {})},
                cwd=cwd,
                start_new_session=True,  # so `close` can stop what it starts in turn
            )
        except (OSError, ValueError, AgentLensError) as exc:  # ValueError: a NUL in an argument
            self._log_file.close()
            self._log_file = None
            await self._remove_memory_group()
            reason = f"{exc.strerror}: {exc.filename}" if isinstance(exc, OSError) else str(exc)
            if isinstance(exc, isolation.SandboxUnavailableError):
                raise
            raise self._error(f"did not start: {one_line(reason, limits.ERROR_CHARS)}") from None
        self._pipes = pipes
        self._guard = asyncio.ensure_future(self._guard_limits(pipes, floors, memory))

    async def _guard_limits(
        self, pipes: ServerPipes, floors: list[DiskFloor], memory: MemoryGroup
    ) -> None:
        """Stops the server (and what it started) once it crosses the disk floor of a folder
        it may write (`disk_guard`: `file_size_mb` bounds each file, not how many), or once a
        process of its memory group is killed for memory."""
        while pipes.returncode() is None:
            await asyncio.sleep(disk_guard.POLL_S)
            if self._stopped_past_limits(pipes, floors, memory):
                return

    def _stopped_past_limits(
        self, pipes: ServerPipes, floors: list[DiskFloor], memory: MemoryGroup
    ) -> bool:
        """Whether it crossed a limit, in which case it is stopped and `_stop` says why."""
        self._stop = self._stop or crossed_limit(floors, memory)
        if self._stop and pipes.transport is not None:
            kill_group(pipes.transport.get_pid())
        return bool(self._stop)

    def _refuse_past_limits(self, pipes: ServerPipes, during: str) -> None:
        """An answer from a server past its limits is no answer: under cgroup v1 the kernel
        kills one process of the group, and the rest may answer before the guard looks."""
        if self._memory is not None and self._stopped_past_limits(
            pipes, self._floors, self._memory
        ):
            raise self._error(f"was {self._stop} during {during}", stderr=True)

    async def _remove_memory_group(self) -> None:
        """In a thread: removing a group waits for its processes to go (`memory_group._remove`)."""
        memory, self._memory = self._memory, None
        if memory is not None:
            await asyncio.to_thread(memory.remove)

    async def close(self) -> None:
        if self._guard is not None:
            self._guard.cancel()
        pipes, self._pipes = self._pipes, None
        if pipes is None or pipes.transport is None:
            await self._remove_memory_group()
            return
        transport = pipes.transport
        try:
            if pipes.returncode() is None:
                pipes.close_stdin()  # the stdio transport's way to ask a server to stop
                await _ended(pipes, limits.CLOSE_WAIT_S)
        finally:
            kill_group(transport.get_pid())  # what it started goes too, even once it has exited
            with contextlib.suppress(TimeoutError):  # its last words, into the log
                await asyncio.wait_for(pipes.stderr_done.wait(), limits.CLOSE_WAIT_S)
            self._close_log()
            # Its pipes closed here: one no longer read (a message too long) never sees its end,
            # and a process left outside the group may hold them open.
            transport.close()
            await _ended(pipes, limits.CLOSE_WAIT_S)
            await self._remove_memory_group()

    async def _notify(self, message: dict[str, Any]) -> None:
        await self._send(message, str(message.get("method", "a request of its own")))

    async def _send(self, message: dict[str, Any], during: str) -> None:
        try:
            await self._running().write(orjson.dumps(message) + b"\n")
        except (BrokenPipeError, ConnectionResetError):
            raise await self._exited(during) from None

    async def _exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        method = message["method"]
        await self._send(message, method)
        pipes = self._running()
        while True:
            try:
                line = await pipes.readline()
            except LineTooLong:
                raise self._error(
                    f"sent a message longer than {limits.MESSAGE_LIMIT} bytes during {method}"
                ) from None
            if not line:
                raise await self._exited(method)
            answer = json_object(line)
            if answer is None and line.strip():  # a log line on stdout, say
                self._junk += 1
                self._last_junk = line[:200].decode("utf-8", "replace")
            elif answer is None:
                continue
            elif "method" in answer:  # a notification, or a request of its own
                if "id" in answer:
                    await self._send(reply(answer), method)
            elif answer.get("id") == message["id"]:
                self._refuse_past_limits(pipes, method)
                return answer

    def _keep_stderr(self, chunk: bytes) -> None:
        """A piece of its stderr: into the log while there is room, its end kept aside."""
        self._stderr_end = (self._stderr_end + chunk)[-limits.STDERR_END :]
        room = max(limits.STDERR_LOG_LIMIT - self._kept, 0)
        if room and self._log_file is not None:
            with contextlib.suppress(OSError):  # a full disk stops the log, not the server
                self._log_file.write(chunk[:room])
                self._log_file.flush()
        self._kept += min(room, len(chunk))
        self._dropped += len(chunk) - min(room, len(chunk))

    def _close_log(self) -> None:
        """The end of its stderr that did not fit, then the log closed and blanked out."""
        log, self._log_file = self._log_file, None
        if log is None:
            return
        with contextlib.suppress(OSError):
            end = self._stderr_end[-self._dropped :] if self._dropped else b""
            if self._dropped > len(end):
                lost = self._dropped - len(end)
                log.write(b"\n[... %d bytes of stderr not kept; its end:]\n" % lost)
            log.write(end)
            log.close()
            _blank_out(self.log, self._secrets())

    async def _exited(self, during: str) -> McpError:
        """The error for a server gone (or its stdout closed), once its last words are in."""
        pipes = self._pipes
        if pipes is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(pipes.stderr_done.wait(), limits.SETTLE_S)
        code = None if pipes is None else await _ended(pipes, limits.SETTLE_S)
        how = "closed its stdout" if code is None else f"exited (exit code {code})"
        memory = self._memory
        if memory is not None:  # it may have died of its memory before the guard looked
            self._stop = stop_note(self._stop, memory, timed_out=False)
        not_started = memory.not_started_note(code) if memory is not None else ""
        how = f"was {self._stop}" if self._stop else f"was {not_started}" if not_started else how
        return self._error(f"{how} during {during}", stderr=True)

    def _error(self, what: str, *, stderr: bool = False) -> McpError:
        text = self._stderr_end.decode("utf-8", "replace") if stderr else ""
        for secret in self._secrets():
            text = text.replace(secret, "***")
        return McpError(
            f"MCP server {self.name!r} {what}", stderr=one_line(text, limits.STDERR_TAIL, end=True)
        )

    def _silence(self) -> str:
        if not self._junk:
            return ""
        last = one_line(self._last_junk, 80)
        return f" ({self._junk} lines on its stdout were not JSON-RPC messages, the last: {last!r})"

    def _running(self) -> ServerPipes:
        if self._pipes is None:
            raise self._error("is not running")
        return self._pipes


def _program(name: str, cwd: str | None) -> str:
    """The server's program as an absolute path; `OSError` as `exec` would raise it."""
    if "/" in name:
        path = Path(cwd or ".", name)
        if not path.exists():
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", name)
        if path.is_dir() or not os.access(path, os.X_OK):
            raise PermissionError(errno.EACCES, "Permission denied", name)
        return str(path.resolve())
    found = shutil.which(name)
    if found is None:
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", name)
    return found


def _named_folders(command: list[str], cwd: str | None) -> list[Path]:
    """What the sandbox shows read-only: its cwd and the folders of files its command line
    names (its script, its config), nothing else of the user's files."""
    named = isolation.named_files(command)
    return [Path(cwd), *named] if cwd else named


async def _ended(pipes: ServerPipes, seconds: float) -> int | None:
    """Its exit code once it has exited, waiting at most `seconds` (not for its pipes, which
    what it started may hold open)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while pipes.returncode() is None and loop.time() < deadline:
        await asyncio.sleep(0.01)
    return pipes.returncode()


def _blank_out(log: Path, secrets: list[str]) -> None:
    """The kept stderr with what the server was given as `***`: it stays in the session folder,
    which a run shares. Done once the server is gone, so a secret split between two reads is
    still found (the file is at most `STDERR_LOG_LIMIT` and a little)."""
    if not secrets or isolation.planted(log):  # replaced by agent code meanwhile: not ours
        return
    with contextlib.suppress(OSError):
        text = log.read_bytes()
        blanked = text
        for secret in secrets:
            blanked = blanked.replace(secret.encode(), b"***")
        if blanked != text:
            log.write_bytes(blanked)


def _server_env() -> dict[str, str]:
    """A scenario's server is untrusted code: the toolchain variables, not the caller's keys;
    HOME as it is (most of it is not in the sandbox), so tools that insist on one start."""
    return {**toolchain_env(), **({"HOME": os.environ["HOME"]} if "HOME" in os.environ else {})}
