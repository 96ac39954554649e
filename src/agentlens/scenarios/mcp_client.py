"""A small MCP client for local (stdio) servers, for the built-in agent: start a server from a
scenario's config entry, `initialize`, list its tools, call them, and stop it with its whole
process group. JSON-RPC 2.0, one message a line (the MCP stdio transport).

The server runs with this process's environment plus its entry's `env` (it needs its token);
the model's shell commands never see either. Requests the server makes of the client (roots,
sampling) are answered "method not found": the built-in agent offers none."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any

import orjson

from agentlens import __version__
from agentlens.errors import AgentLensError
from agentlens.reviews.sandbox import kill_group

PROTOCOL_VERSION = "2025-06-18"
TIMEOUT_S = 60.0
"""Per request; a server that takes longer is treated as failed."""
LINE_LIMIT = 32 * 1024 * 1024
"""The longest message read from a server (a tool result can be a whole file)."""
STDERR_TAIL = 400


class McpError(AgentLensError):
    """An MCP server that would not start, broke the protocol, or answered with an error."""


class McpSession:
    """One running stdio server; `start` before use, `close` after (also on errors)."""

    def __init__(self, name: str, spec: dict[str, Any], *, log: Path) -> None:
        self.name = name
        self.spec = spec
        self.log = log
        self.tools: list[dict[str, Any]] = []
        self._process: asyncio.subprocess.Process | None = None
        self._next_id = 0

    async def start(self) -> None:
        command = [str(self.spec["command"]), *map(str, self.spec.get("args", []))]
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as errors:
            try:
                self._process = await asyncio.create_subprocess_exec(
                    *command,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=errors,
                    env={**os.environ, **self.spec.get("env", {})},
                    cwd=self.spec.get("cwd"),
                    start_new_session=True,  # so `close` can stop what it starts in turn
                    limit=LINE_LIMIT,
                )
            except OSError as exc:
                raise McpError(f"MCP server {self.name!r} did not start: {exc}") from None
        info = {"name": "agentlens", "version": __version__}
        await self.request(
            "initialize",
            {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": info},
        )
        await self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.tools = await self._all_tools()

    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """The tool's text output and whether it reports an error."""
        result = await self.request("tools/call", {"name": tool, "arguments": arguments})
        content = result.get("content")
        parts: list[Any] = content if isinstance(content, list) else []
        text = "\n".join(_part_text(part) for part in parts)
        if not parts and "structuredContent" in result:
            text = orjson.dumps(result["structuredContent"]).decode()
        return text, bool(result.get("isError"))

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        number = self._next_id
        await self._send({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
        try:
            return await asyncio.wait_for(self._answer(number, method), TIMEOUT_S)
        except TimeoutError:
            raise McpError(
                f"MCP server {self.name!r} did not answer {method} in {TIMEOUT_S:g}s"
            ) from None

    async def close(self) -> None:
        process, self._process = self._process, None
        if process is None or process.returncode is not None:
            return
        if process.stdin is not None:
            process.stdin.close()  # the stdio transport's way to ask a server to stop
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), 2)
        kill_group(process.pid)  # what it started goes too, even once it has exited itself
        await process.wait()

    async def _all_tools(self) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = []
        cursor: Any = None
        for _ in range(100):  # pages; a server that pages forever is cut off
            page = await self.request("tools/list", {"cursor": cursor} if cursor else {})
            tools += [t for t in page.get("tools") or [] if isinstance(t, dict) and "name" in t]
            cursor = page.get("nextCursor")
            if not cursor:
                break
        return tools

    async def _send(self, message: dict[str, Any]) -> None:
        process = self._running()
        assert process.stdin is not None
        try:
            process.stdin.write(orjson.dumps(message) + b"\n")
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            raise McpError(f"MCP server {self.name!r} exited{self._stderr()}") from None

    async def _answer(self, number: int, method: str) -> dict[str, Any]:
        process = self._running()
        assert process.stdout is not None
        while True:
            try:
                line = await process.stdout.readline()
            except ValueError:  # a line beyond LINE_LIMIT
                raise McpError(f"MCP server {self.name!r} sent a message too long") from None
            if not line:
                raise McpError(f"MCP server {self.name!r} exited during {method}{self._stderr()}")
            message = _message(line)
            if message is None:
                continue  # a log line on stdout, or a notification
            if "method" in message and "id" in message:  # a request of ours: none offered
                error = {"code": -32601, "message": "method not found"}
                await self._send({"jsonrpc": "2.0", "id": message["id"], "error": error})
                continue
            if message.get("id") != number:
                continue
            if "error" in message:
                error = message["error"] if isinstance(message["error"], dict) else {}
                raise McpError(
                    f"MCP server {self.name!r}: {method} failed: {error.get('message', error)}"
                )
            result = message.get("result")
            return result if isinstance(result, dict) else {}

    def _running(self) -> asyncio.subprocess.Process:
        if self._process is None:
            raise McpError(f"MCP server {self.name!r} is not running")
        return self._process

    def _stderr(self) -> str:
        try:
            tail = self.log.read_text(encoding="utf-8", errors="replace").strip()[-STDERR_TAIL:]
        except OSError:
            return ""
        return f": {tail}" if tail else ""


def _message(line: bytes) -> dict[str, Any] | None:
    if not line.strip():
        return None
    try:
        message = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None  # servers that print logs to stdout exist; skip what is not JSON-RPC
    return message if isinstance(message, dict) else None


def _part_text(part: Any) -> str:
    if not isinstance(part, dict):
        return ""
    if part.get("type") == "text":
        return str(part.get("text", ""))
    if part.get("type") == "resource" and isinstance(part.get("resource"), dict):
        return str(part["resource"].get("text", ""))
    return f"[{part.get('type', 'content')} omitted]"
