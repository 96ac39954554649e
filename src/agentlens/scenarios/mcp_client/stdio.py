"""The stdio transport: a local server started from its entry (`command`, `args`, `env`,
`cwd`), one JSON-RPC message a line; its stderr kept in a log, its whole process group stopped
at the end."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import IO, Any

import orjson

from agentlens.reviews.sandbox import kill_group
from agentlens.scenarios.mcp_client import limits
from agentlens.scenarios.mcp_client.session import (
    McpError,
    McpSession,
    json_object,
    one_line,
    reply,
)


class StdioSession(McpSession):
    """A local server, its stderr kept in `log` (at most `STDERR_LOG_LIMIT` bytes of it)."""

    def __init__(self, name: str, spec: dict[str, Any], *, log: Path) -> None:
        super().__init__(name, spec)
        self.log = log
        self._process: asyncio.subprocess.Process | None = None
        self._stderr_pump: asyncio.Task[None] | None = None
        self._stderr_end = b""
        self._junk = 0  # lines on its stdout that are not JSON-RPC messages
        self._last_junk = ""

    async def _open(self) -> None:
        command = [str(self.spec["command"]), *map(str, self.spec.get("args", []))]
        cwd = self.spec.get("cwd")
        if cwd is not None and not Path(cwd).is_dir():
            raise self._error(f"did not start: its cwd {one_line(str(cwd), 200)} is not a folder")
        self.log.parent.mkdir(parents=True, exist_ok=True)
        log = self.log.open("ab")
        try:
            self._process = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env={**os.environ, **self.spec.get("env", {})},
                cwd=cwd,
                start_new_session=True,  # so `close` can stop what it starts in turn
                limit=limits.MESSAGE_LIMIT,
            )
        except (OSError, ValueError) as exc:  # ValueError: a NUL in an argument or a variable
            log.close()
            reason = f"{exc.strerror}: {exc.filename}" if isinstance(exc, OSError) else str(exc)
            raise self._error(f"did not start: {one_line(reason, limits.ERROR_CHARS)}") from None
        assert self._process.stderr is not None
        self._stderr_pump = asyncio.create_task(self._keep_stderr(self._process.stderr, log))

    async def close(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        try:
            if process.returncode is None and process.stdin is not None:
                process.stdin.close()  # the stdio transport's way to ask a server to stop
                await _ended(process, limits.CLOSE_WAIT_S)
        finally:
            kill_group(process.pid)  # what it started goes too, even once it has exited itself
            pump = self._stderr_pump
            if pump is not None:
                await asyncio.wait(
                    {pump}, timeout=limits.CLOSE_WAIT_S
                )  # its last words, into the log
                pump.cancel()
                await asyncio.wait({pump})
            # Its pipes closed here: one no longer read (a message too long) never sees its end,
            # and a process left outside the group may hold them open.
            transport = getattr(process, "_transport", None)
            if transport is not None:
                transport.close()
            await _ended(process, limits.CLOSE_WAIT_S)

    async def _notify(self, message: dict[str, Any]) -> None:
        await self._send(message, str(message.get("method", "a request of its own")))

    async def _send(self, message: dict[str, Any], during: str) -> None:
        process = self._running()
        assert process.stdin is not None
        try:
            process.stdin.write(orjson.dumps(message) + b"\n")
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            raise await self._exited(during) from None

    async def _exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        method = message["method"]
        await self._send(message, method)
        stdout = self._running().stdout
        assert stdout is not None
        while True:
            try:
                line = await stdout.readline()
            except ValueError:  # a line beyond limits.MESSAGE_LIMIT (its buffer is dropped)
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
                return answer

    async def _keep_stderr(self, stream: asyncio.StreamReader, log: IO[bytes]) -> None:
        kept = dropped = 0
        try:
            while chunk := await stream.read(65536):
                self._stderr_end = (self._stderr_end + chunk)[-limits.STDERR_END :]
                room = max(limits.STDERR_LOG_LIMIT - kept, 0)
                with contextlib.suppress(OSError):  # a full disk stops the log, not the server
                    if room:
                        log.write(chunk[:room])
                        log.flush()
                kept += min(room, len(chunk))
                dropped += len(chunk) - min(room, len(chunk))
        finally:
            with contextlib.suppress(OSError):
                end = self._stderr_end[-dropped:] if dropped else b""
                if dropped > len(end):
                    lost = dropped - len(end)
                    log.write(b"\n[... %d bytes of stderr not kept; its end:]\n" % lost)
                log.write(end)
                log.close()
                _blank_out(self.log, self._secrets())

    async def _exited(self, during: str) -> McpError:
        """The error for a server gone (or its stdout closed), once its last words are in."""
        process = self._process
        if self._stderr_pump is not None:
            await asyncio.wait({self._stderr_pump}, timeout=limits.SETTLE_S)
        code = None if process is None else await _ended(process, limits.SETTLE_S)
        how = "closed its stdout" if code is None else f"exited (exit code {code})"
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

    def _running(self) -> asyncio.subprocess.Process:
        if self._process is None:
            raise self._error("is not running")
        return self._process


async def _ended(process: asyncio.subprocess.Process, seconds: float) -> int | None:
    """Its exit code once it has exited, waiting at most `seconds` (`wait()` would wait for its
    pipes too, which what it started may hold open)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while process.returncode is None and loop.time() < deadline:
        await asyncio.sleep(0.01)
    return process.returncode


def _blank_out(log: Path, secrets: list[str]) -> None:
    """The kept stderr with what the server was given as `***`: it stays in the session folder,
    which a run shares. Done once the server is gone, so a secret split between two reads is
    still found (the file is at most `STDERR_LOG_LIMIT` and a little)."""
    if not secrets:
        return
    with contextlib.suppress(OSError):
        text = log.read_bytes()
        blanked = text
        for secret in secrets:
            blanked = blanked.replace(secret.encode(), b"***")
        if blanked != text:
            log.write_bytes(blanked)
