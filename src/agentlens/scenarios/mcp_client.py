"""A small MCP client, for the built-in agent and `agentlens mcp check`: start or reach a server
from a scenario's config entry, `initialize`, list its tools, call them, and close it. JSON-RPC
2.0 over stdio (one message a line; the server's whole process group is stopped at the end) or
over streamable HTTP (a POST per message, answered with JSON or an event stream).

A local server runs with this process's environment plus its entry's `env` (it needs its token);
the model's shell commands never see either. Requests a server makes of the client (roots,
sampling) are answered "method not found": this client offers none."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any

import httpx
import orjson

from agentlens import __version__
from agentlens.errors import AgentLensError
from agentlens.reviews.sandbox import kill_group

PROTOCOL_VERSION = "2025-06-18"
TIMEOUT_S = 60.0
"""Per request; a server that takes longer is treated as failed."""
MESSAGE_LIMIT = 32 * 1024 * 1024
"""The longest message read from a server (a tool result can be a whole file)."""
STDERR_TAIL = 400


class McpError(AgentLensError):
    """An MCP server that would not start, broke the protocol, or answered with an error."""


class McpSession:
    """One server; `start` before use, `close` after (also after an error)."""

    def __init__(self, name: str, spec: dict[str, Any]) -> None:
        self.name = name
        self.spec = spec
        self.tools: list[dict[str, Any]] = []
        self._next_id = 0

    async def start(self) -> None:
        await self._open()
        info = {"name": "agentlens", "version": __version__}
        await self.request(
            "initialize",
            {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": info},
        )
        await self._notify({"jsonrpc": "2.0", "method": "notifications/initialized"})
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
        message = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        try:
            answer = await asyncio.wait_for(self._exchange(message), TIMEOUT_S)
        except TimeoutError:
            raise McpError(
                f"MCP server {self.name!r} did not answer {method} in {TIMEOUT_S:g}s"
            ) from None
        if "error" in answer:
            error = answer["error"] if isinstance(answer["error"], dict) else {}
            raise McpError(
                f"MCP server {self.name!r}: {method} failed: {error.get('message', error)}"
            )
        result = answer.get("result")
        return result if isinstance(result, dict) else {}

    async def close(self) -> None:
        """Stop or leave the server; safe to call twice."""

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

    async def _open(self) -> None:
        raise NotImplementedError

    async def _notify(self, message: dict[str, Any]) -> None:
        raise NotImplementedError

    async def _exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send a request; its answer (the message with its id)."""
        raise NotImplementedError


class StdioSession(McpSession):
    """A local server, its stderr kept in `log`."""

    def __init__(self, name: str, spec: dict[str, Any], *, log: Path) -> None:
        super().__init__(name, spec)
        self.log = log
        self._process: asyncio.subprocess.Process | None = None

    async def _open(self) -> None:
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
                    limit=MESSAGE_LIMIT,
                )
            except OSError as exc:
                raise McpError(f"MCP server {self.name!r} did not start: {exc}") from None

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

    async def _notify(self, message: dict[str, Any]) -> None:
        process = self._running()
        assert process.stdin is not None
        try:
            process.stdin.write(orjson.dumps(message) + b"\n")
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            raise McpError(f"MCP server {self.name!r} exited{self._stderr()}") from None

    async def _exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        await self._notify(message)
        stdout = self._running().stdout
        assert stdout is not None
        while True:
            try:
                line = await stdout.readline()
            except ValueError:  # a line beyond MESSAGE_LIMIT
                raise McpError(f"MCP server {self.name!r} sent a message too long") from None
            if not line:
                method = message["method"]
                raise McpError(f"MCP server {self.name!r} exited during {method}{self._stderr()}")
            answer = _json_object(line)
            if answer is None:
                continue  # a log line on stdout, or a notification
            if "method" in answer and "id" in answer:  # a request of ours: none offered
                await self._notify(_not_found(answer["id"]))
            elif answer.get("id") == message["id"]:
                return answer

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


class HttpSession(McpSession):
    """A remote server (streamable HTTP, the entry's `url` and `headers`)."""

    def __init__(self, name: str, spec: dict[str, Any]) -> None:
        super().__init__(name, spec)
        self._client: httpx.AsyncClient | None = None
        self._session_id: str | None = None

    async def _open(self) -> None:
        headers = {str(k): str(v) for k, v in (self.spec.get("headers") or {}).items()}
        self._client = httpx.AsyncClient(headers=headers, timeout=TIMEOUT_S)

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is None:
            return
        if self._session_id is not None:  # the spec's way to end a session; optional for both
            with contextlib.suppress(httpx.HTTPError):
                await client.delete(str(self.spec["url"]), headers=self._headers())
        await client.aclose()

    async def _notify(self, message: dict[str, Any]) -> None:
        async with self._post(message) as response:
            await self._check(response)

    async def _exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        async with self._post(message) as response:
            await self._check(response)
            self._session_id = response.headers.get("mcp-session-id") or self._session_id
            kind = response.headers.get("content-type", "").split(";")[0].strip()
            if kind == "text/event-stream":
                return await self._from_stream(response, message["id"])
            answer = _json_object(await _limited_body(response))
            if answer is None:
                raise McpError(
                    f"MCP server {self.name!r} answered {message['method']} without JSON"
                )
            return answer

    def _post(self, message: dict[str, Any]) -> Any:
        if self._client is None:
            raise McpError(f"MCP server {self.name!r} is not open")
        return self._client.stream(
            "POST", str(self.spec["url"]), content=orjson.dumps(message), headers=self._headers()
        )

    def _headers(self) -> dict[str, str]:
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": PROTOCOL_VERSION,
        }
        if self._session_id is not None:
            headers["mcp-session-id"] = self._session_id
        return headers

    async def _check(self, response: httpx.Response) -> None:
        if response.status_code >= 400:
            body = (await _limited_body(response, 400)).decode(errors="replace").strip()
            raise McpError(f"MCP server {self.name!r} answered HTTP {response.status_code}: {body}")

    async def _from_stream(self, response: httpx.Response, number: int) -> dict[str, Any]:
        data: list[str] = []
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                data.append(line[5:].lstrip())
            elif not line and data:  # an event ends
                answer = _json_object("\n".join(data).encode())
                data = []
                if answer is not None and "method" in answer and "id" in answer:
                    await self._notify(_not_found(answer["id"]))
                elif answer is not None and answer.get("id") == number:
                    return answer
        raise McpError(f"MCP server {self.name!r} ended its event stream without an answer")


def open_session(name: str, spec: dict[str, Any], *, log: Path) -> McpSession:
    """The session an entry of an `mcpServers` config asks for (not started yet)."""
    if "url" in spec:
        return HttpSession(name, spec)
    return StdioSession(name, spec, log=log)


async def _limited_body(response: httpx.Response, limit: int = MESSAGE_LIMIT) -> bytes:
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > limit:
            break
    return bytes(body[:limit])


def _not_found(number: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": number,
        "error": {"code": -32601, "message": "method not found"},
    }


def _json_object(data: bytes) -> dict[str, Any] | None:
    if not data.strip():
        return None
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None  # servers that print logs to stdout exist; skip what is not JSON-RPC
    return value if isinstance(value, dict) else None


def _part_text(part: Any) -> str:
    if not isinstance(part, dict):
        return ""
    if part.get("type") == "text":
        return str(part.get("text", ""))
    if part.get("type") == "resource" and isinstance(part.get("resource"), dict):
        return str(part["resource"].get("text", ""))
    return f"[{part.get('type', 'content')} omitted]"
