"""A local server's three pipes through a subprocess protocol of our own (`loop.subprocess_exec`),
not `asyncio.create_subprocess_exec`: its transport is then ours, so `close` can shut pipes that
are no longer read (a message too long) or that what the server started still holds open, with
public API only.

stdout comes out as lines of at most `limit` bytes (reading pauses while more than twice that
waits unread); stderr goes, as it comes, to a callback; stdin writes wait while the pipe is full."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import cast


class LineTooLong(Exception):
    """The server sent a line longer than the limit; what it sends after it is not read."""


class ServerPipes(asyncio.SubprocessProtocol):
    def __init__(self, limit: int, on_stderr: Callable[[bytes], None]) -> None:
        self.limit = limit
        self.on_stderr = on_stderr
        self.stderr_done = asyncio.Event()
        """Set once its stderr is closed (it has exited, or its pipes were shut)."""
        self.transport: asyncio.SubprocessTransport | None = None
        self._lines = bytearray()
        self._searched = 0  # bytes of `_lines` known to hold no newline
        self._partial = 0  # bytes of `_lines` after its last newline
        self._stdout_ended = self._too_long = self._stdin_lost = self._held = False
        self._wake: asyncio.Future[None] | None = None
        self._writable = asyncio.Event()
        self._writable.set()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.SubprocessTransport, transport)

    def pipe_data_received(self, fd: int, data: bytes | bytearray) -> None:
        if fd == 2:
            self.on_stderr(bytes(data))
        elif fd == 1 and not self._too_long:
            self._lines += data
            last = data.rfind(b"\n")  # of the new bytes only: a long line comes in many pieces
            self._partial = len(data) - last - 1 if last >= 0 else self._partial + len(data)
            if self._partial > self.limit:
                self._refuse()
            elif len(self._lines) > 2 * self.limit and not self._held:
                self._held = True  # lines come faster than they are read: let the pipe fill
                self._stdout_reading(False)
            self._wake_reader()

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 0:
            self._stdin_lost = True
            self._writable.set()  # a writer waiting for room learns the pipe is gone
        elif fd == 1:
            self._stdout_ended = True
            self._wake_reader()
        elif fd == 2:
            self.stderr_done.set()

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    async def write(self, data: bytes) -> None:
        """`data` to its stdin, once the pipe has room; `BrokenPipeError` once it is gone."""
        stdin = self._stdin()
        if self._stdin_lost or stdin is None or stdin.is_closing():
            raise BrokenPipeError
        stdin.write(data)
        await self._writable.wait()
        if self._stdin_lost:
            raise BrokenPipeError

    def close_stdin(self) -> None:
        stdin = self._stdin()
        if stdin is not None:
            stdin.close()

    async def readline(self) -> bytes:
        """Its next stdout line with its newline; what is left without one at its end; b"" once
        stdout is closed. `LineTooLong` for a line beyond the limit."""
        while True:
            if self._too_long:
                raise LineTooLong
            end = self._lines.find(b"\n", self._searched)
            if end >= 0:
                self._searched = 0
                if end >= self.limit:
                    self._refuse()
                    raise LineTooLong
                line = bytes(self._lines[: end + 1])
                del self._lines[: end + 1]
                if self._held and len(self._lines) <= self.limit:
                    self._held = False
                    self._stdout_reading(True)
                return line
            self._searched = len(self._lines)
            if self._stdout_ended:
                line, self._lines = bytes(self._lines), bytearray()
                return line
            self._wake = asyncio.get_running_loop().create_future()
            try:
                await self._wake
            finally:
                self._wake = None

    def returncode(self) -> int | None:
        return None if self.transport is None else self.transport.get_returncode()

    def _refuse(self) -> None:
        """Drop a line past the limit and stop reading stdout: the server blocks on a full pipe
        until `close` stops it."""
        self._too_long = True
        self._lines = bytearray()
        self._stdout_reading(False)

    def _stdout_reading(self, on: bool) -> None:
        stdout = None if self.transport is None else self.transport.get_pipe_transport(1)
        if stdout is not None:
            reader = cast(asyncio.ReadTransport, stdout)
            if on:
                reader.resume_reading()
            else:
                reader.pause_reading()

    def _wake_reader(self) -> None:
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

    def _stdin(self) -> asyncio.WriteTransport | None:
        if self.transport is None:
            return None
        return cast(asyncio.WriteTransport | None, self.transport.get_pipe_transport(0))
