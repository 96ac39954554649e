"""A small MCP client, for the built-in agent and `agentlens mcp check`: start or reach a server
from a scenario's config entry, `initialize`, list its tools, call them, and close it. JSON-RPC
2.0 over stdio (one message a line; the server's whole process group is stopped at the end) or
over streamable HTTP (a POST per message, answered with JSON or an event stream).

A local server runs with this process's environment plus its entry's `env` (it needs its token);
the model's shell commands never see either. Requests a server makes of the client are answered
"method not found" (roots, sampling: this client offers none), except `ping`.

A server and all it sends are untrusted: every wait has a limit (`TIMEOUT_S`), every message a
size (`MESSAGE_LIMIT`), its stderr log a size; what it says in an error reaches a message as one
line without control characters, its entry's secrets blanked out; tools without a usable name are
left out, and what is kept of each tool is small."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import IO, Any

import httpx
import orjson

from agentlens import __version__
from agentlens.errors import AgentLensError
from agentlens.reviews.mcp_servers import LEGACY_SSE
from agentlens.reviews.sandbox import kill_group

PROTOCOL_VERSION = "2025-06-18"
TIMEOUT_S = 60.0
"""Per request, and for the whole tool list; a server that takes longer is treated as failed."""
CLOSE_WAIT_S = 2.0
"""How long a server gets to stop by itself (its stdin closed, or its HTTP session deleted)."""
SETTLE_S = 0.5
"""How long an exited server's last stderr and exit code are waited for, for its error."""
MESSAGE_LIMIT = 32 * 1024 * 1024
"""The longest message read from a server (a tool result can be a whole file)."""
MAX_TOOLS = 1000
MAX_PAGES = 100
"""Of tools/list; a server that pages forever, or repeats a cursor, is cut off."""
DESCRIPTION_LIMIT = 2000
SCHEMA_LIMIT = 20_000
"""Bytes of a tool's inputSchema kept (the prompt shows a few hundred)."""
OUTPUT_LIMIT = 1_000_000
"""Characters of a tool's output kept, as of a shell command's."""
STDERR_LOG_LIMIT = 1_000_000
"""Bytes of a local server's stderr kept in its log: its start, then its last `STDERR_END`."""
STDERR_END = 4096
STDERR_TAIL = 400
"""Characters of its stderr's end an error shows."""
ERROR_CHARS = 300
"""Characters of what a server says in an error (a JSON-RPC error, an HTTP body)."""

_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?")


class McpError(AgentLensError):
    """An MCP server that would not start, broke the protocol, or answered with an error.
    `brief` is the message without the server's stderr (which may hold what it was given)."""

    def __init__(self, message: str, *, stderr: str = "") -> None:
        super().__init__(f"{message}: {stderr}" if stderr else message)
        self.brief = message


def one_line(text: str, limit: int, *, end: bool = False) -> str:
    """`text` as one line for a terminal or a message: escape sequences and other control
    characters gone, whitespace runs a space, at most `limit` characters (its end with `end`)."""
    text = text[-limit * 8 :] if end else text[: limit * 8]  # the rest is cut anyway
    text = _ESCAPES.sub("", text)
    text = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    if len(text) <= limit:
        return text
    return "…" + text[-(limit - 1) :] if end else text[: limit - 1] + "…"


class McpSession:
    """One server; `start` before use, `close` after (also after an error)."""

    def __init__(self, name: str, spec: dict[str, Any]) -> None:
        self.name = name
        self.spec = spec
        self.tools: list[dict[str, Any]] = []
        """Each `{name, description?, inputSchema?}`, names unique and printable."""
        self.left_out = 0
        """Tools listed but not kept: no usable name, or beyond `MAX_TOOLS`."""
        self._next_id = 0

    async def start(self) -> None:
        await self._open()
        info = {"name": "agentlens", "version": __version__}
        await self.request(
            "initialize",
            {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": info},
        )
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await self._timed("notifications/initialized", self._notify(initialized))
        try:
            self.tools = await asyncio.wait_for(self._all_tools(), TIMEOUT_S)
        except TimeoutError:
            raise self._error(f"did not list its tools in {TIMEOUT_S:g}s") from None

    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """The tool's text output (at most `OUTPUT_LIMIT` characters) and whether it reports
        an error."""
        result = await self.request("tools/call", {"name": tool, "arguments": arguments})
        content = result.get("content")
        parts = [_part_text(part) for part in (content if isinstance(content, list) else [])]
        text = "\n".join(part for part in parts if part is not None)
        if not parts and "structuredContent" in result:
            text = _json_text(result["structuredContent"])
        if len(text) > OUTPUT_LIMIT:
            more = len(text) - OUTPUT_LIMIT
            text = f"{text[:OUTPUT_LIMIT]}\n[... {more} more characters of output not kept]"
        return text, result.get("isError") is True

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        message = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        answer = await self._timed(method, self._exchange(message))
        if answer.get("error") is not None:
            raise self._error(f"{method} failed: {_error_text(answer['error'], self._secrets())}")
        result = answer.get("result")
        if not isinstance(result, dict):
            what = "without a result" if result is None else f"with {_kind(result)} for a result"
            raise self._error(f"answered {method} {what} (not an object)")
        return result

    async def close(self) -> None:
        """Stop or leave the server; safe to call twice."""

    async def _timed(self, method: str, work: Any) -> Any:
        try:
            return await asyncio.wait_for(work, TIMEOUT_S)
        except TimeoutError:
            raise self._error(
                f"did not answer {method} in {TIMEOUT_S:g}s{self._silence()}", stderr=True
            ) from None

    async def _all_tools(self) -> list[dict[str, Any]]:
        tools: dict[str, dict[str, Any]] = {}
        cursor: str | None = None
        cursors: set[str] = set()
        for _ in range(MAX_PAGES):
            page = await self.request("tools/list", {"cursor": cursor} if cursor else {})
            listed = page.get("tools") or []
            if not isinstance(listed, list):
                raise self._error(f"answered tools/list with tools that are {_kind(listed)}")
            for value in listed:
                tool = _tool(value)
                if tool is None or (tool["name"] not in tools and len(tools) >= MAX_TOOLS):
                    self.left_out += 1
                elif tool["name"] not in tools:
                    tools[tool["name"]] = tool
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str) or not cursor or cursor in cursors:
                break
            cursors.add(cursor)
        return list(tools.values())

    def _error(self, what: str, *, stderr: bool = False) -> McpError:
        return McpError(f"MCP server {self.name!r} {what}")

    def _silence(self) -> str:
        """What may explain a server's silence (for a timeout's message)."""
        return ""

    def _secrets(self) -> list[str]:
        """What its entry gives it that no message may show (its env values, its headers')."""
        given = {**(self.spec.get("env") or {}), **(self.spec.get("headers") or {})}
        values = [str(v) for v in given.values()]
        parts = [v.rsplit(" ", 1)[1] for v in values if " " in v]  # the TOKEN of "Bearer TOKEN"
        return [s for s in parts + values if len(s) >= 6]

    async def _open(self) -> None:
        raise NotImplementedError

    async def _notify(self, message: dict[str, Any]) -> None:
        raise NotImplementedError

    async def _exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send a request; its answer (the message with its id)."""
        raise NotImplementedError


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
                limit=MESSAGE_LIMIT,
            )
        except (OSError, ValueError) as exc:  # ValueError: a NUL in an argument or a variable
            log.close()
            reason = f"{exc.strerror}: {exc.filename}" if isinstance(exc, OSError) else str(exc)
            raise self._error(f"did not start: {one_line(reason, ERROR_CHARS)}") from None
        assert self._process.stderr is not None
        self._stderr_pump = asyncio.create_task(self._keep_stderr(self._process.stderr, log))

    async def close(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        try:
            if process.returncode is None and process.stdin is not None:
                process.stdin.close()  # the stdio transport's way to ask a server to stop
                await _ended(process, CLOSE_WAIT_S)
        finally:
            kill_group(process.pid)  # what it started goes too, even once it has exited itself
            pump = self._stderr_pump
            if pump is not None:
                await asyncio.wait({pump}, timeout=CLOSE_WAIT_S)  # its last words, into the log
                pump.cancel()
                await asyncio.wait({pump})
            # Its pipes closed here: one no longer read (a message too long) never sees its end,
            # and a process left outside the group may hold them open.
            transport = getattr(process, "_transport", None)
            if transport is not None:
                transport.close()
            await _ended(process, CLOSE_WAIT_S)

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
            except ValueError:  # a line beyond MESSAGE_LIMIT (its buffer is dropped)
                raise self._error(
                    f"sent a message longer than {MESSAGE_LIMIT} bytes during {method}"
                ) from None
            if not line:
                raise await self._exited(method)
            answer = _json_object(line)
            if answer is None and line.strip():  # a log line on stdout, say
                self._junk += 1
                self._last_junk = line[:200].decode("utf-8", "replace")
            elif answer is None:
                continue
            elif "method" in answer:  # a notification, or a request of its own
                if "id" in answer:
                    await self._send(_reply(answer), method)
            elif answer.get("id") == message["id"]:
                return answer

    async def _keep_stderr(self, stream: asyncio.StreamReader, log: IO[bytes]) -> None:
        kept = dropped = 0
        try:
            while chunk := await stream.read(65536):
                self._stderr_end = (self._stderr_end + chunk)[-STDERR_END:]
                room = max(STDERR_LOG_LIMIT - kept, 0)
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
            await asyncio.wait({self._stderr_pump}, timeout=SETTLE_S)
        code = None if process is None else await _ended(process, SETTLE_S)
        how = "closed its stdout" if code is None else f"exited (exit code {code})"
        return self._error(f"{how} during {during}", stderr=True)

    def _error(self, what: str, *, stderr: bool = False) -> McpError:
        text = self._stderr_end.decode("utf-8", "replace") if stderr else ""
        for secret in self._secrets():
            text = text.replace(secret, "***")
        return McpError(
            f"MCP server {self.name!r} {what}", stderr=one_line(text, STDERR_TAIL, end=True)
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


class HttpSession(McpSession):
    """A remote server (streamable HTTP, the entry's `url` and `headers`)."""

    def __init__(self, name: str, spec: dict[str, Any]) -> None:
        super().__init__(name, spec)
        self._client: httpx.AsyncClient | None = None
        self._session_id: str | None = None

    async def _open(self) -> None:
        url = str(self.spec["url"])
        try:
            scheme = httpx.URL(url).scheme
        except httpx.InvalidURL as exc:
            raise self._error(f"has a url that cannot be used: {one_line(str(exc), 200)}") from None
        if scheme not in ("http", "https"):
            raise self._error(f"has a url that is not http(s): {one_line(url, 200)}")
        headers = {str(k): str(v) for k, v in (self.spec.get("headers") or {}).items()}
        for key, value in headers.items():  # said by name: a value is often a token
            if not (f"{key}{value}".isascii() and f"{key}{value}".isprintable()):
                raise self._error(f"has a header {one_line(key, 60)!r} that is not printable ASCII")
        self._client = httpx.AsyncClient(headers=headers, timeout=TIMEOUT_S)

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is None:
            return
        if self._session_id is not None:  # the spec's way to end a session; optional for both
            with contextlib.suppress(httpx.HTTPError, httpx.InvalidURL, TimeoutError):
                await asyncio.wait_for(
                    client.delete(str(self.spec["url"]), headers=self._headers()), CLOSE_WAIT_S
                )
        await client.aclose()

    async def _notify(self, message: dict[str, Any]) -> None:
        with self._reaching():
            async with self._post(message) as response:
                await self._check(response, str(message.get("method", "a request of its own")))

    async def _exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        method = message["method"]
        with self._reaching():
            async with self._post(message) as response:
                await self._check(response, method)
                session = response.headers.get("mcp-session-id", "")
                if session and len(session) < 1000 and session.isascii() and session.isprintable():
                    self._session_id = session
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if kind == "text/event-stream":
                    return await self._from_stream(response, message["id"], method)
                body, whole = await _limited_body(response)
                if not whole:
                    raise self._error(f"sent a message longer than {MESSAGE_LIMIT} bytes")
                answer = _json_object(body)
                if answer is None:
                    what = one_line(body.decode("utf-8", "replace"), 80)
                    what = (
                        f"{kind or 'a body'} that is not a JSON-RPC message: {what}"
                        if what
                        else "no message"
                    )
                    raise self._error(
                        f"answered {method} with {what} (HTTP {response.status_code})"
                    )
                return answer

    @contextlib.contextmanager
    def _reaching(self) -> Iterator[None]:
        """httpx's errors (no connection, a name that does not resolve, a broken stream) as
        one line naming the host."""
        try:
            yield
        except httpx.InvalidURL as exc:
            raise self._error(f"has a url that cannot be used: {one_line(str(exc), 200)}") from None
        except httpx.HTTPError as exc:
            url = httpx.URL(str(self.spec["url"]))
            host = f"{url.host}:{url.port}" if url.port else url.host
            how = {
                httpx.ConnectError: "could not connect to",
                httpx.TimeoutException: "timed out at",
            }
            verb = next((v for k, v in how.items() if isinstance(exc, k)), "failed at")
            reason = one_line(str(exc) or type(exc).__name__, ERROR_CHARS)
            raise self._error(f"{verb} {host}: {reason}") from None

    def _post(self, message: dict[str, Any]) -> Any:
        if self._client is None:
            raise self._error("is not open")
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

    async def _check(self, response: httpx.Response, method: str) -> None:
        status = response.status_code
        if 300 <= status < 400:
            where = one_line(response.headers.get("location", "nowhere"), 200)
            raise self._error(
                f"answered {method} with HTTP {status}, a redirect to {where} "
                "(not followed: give that url in the scenario)"
            )
        if status >= 400:
            body, _ = await _limited_body(response, 4 * ERROR_CHARS)
            text = _redacted(body.decode("utf-8", "replace"), self._secrets())
            said = one_line(text, ERROR_CHARS)
            raise self._error(f"answered HTTP {status}{': ' + said if said else ''}")

    async def _from_stream(
        self, response: httpx.Response, number: int, method: str
    ) -> dict[str, Any]:
        try:
            async for data in _events(response):
                answer = _json_object(data)
                if answer is None:
                    continue
                if "method" in answer:
                    if "id" in answer:
                        await self._notify(_reply(answer))
                elif answer.get("id") == number:
                    return answer
        except _TooLong:
            raise self._error(f"sent a message longer than {MESSAGE_LIMIT} bytes") from None
        raise self._error(f"ended its event stream without answering {method}")


def open_session(
    name: str, spec: dict[str, Any], *, log: Path, workdir: Path | None = None
) -> McpSession:
    """The session an entry of an `mcpServers` config asks for (not started yet); a local server
    runs in `workdir` unless its entry says `cwd` (as agent CLIs run theirs in the project)."""
    if spec.get("type") == "sse":
        raise McpError(f"MCP server {name!r}: {LEGACY_SSE}")
    if "url" in spec:
        return HttpSession(name, spec)
    if workdir is not None:
        spec = {"cwd": str(workdir), **spec}
    return StdioSession(name, spec, log=log)


class _TooLong(Exception):
    pass


async def _events(response: httpx.Response) -> AsyncIterator[bytes]:
    """The data of each event of an event stream; a line or an event beyond `MESSAGE_LIMIT`
    raises `_TooLong` (a stream is read as it comes, never whole)."""
    pending = bytearray()
    data = bytearray()
    has_data = False
    async for chunk in response.aiter_bytes():
        start, search = 0, len(pending)  # a line's end can only be in what came now
        pending += chunk
        while (end := pending.find(b"\n", search)) >= 0:
            line = bytes(pending[start:end]).rstrip(b"\r")
            start = search = end + 1
            if line.startswith(b"data:"):
                piece = line[5:]
                data += (piece[1:] if piece.startswith(b" ") else piece) + b"\n"
                has_data = True
                if len(data) > MESSAGE_LIMIT:
                    raise _TooLong
            elif not line and has_data:  # an event ends
                yield bytes(data[:-1])
                data.clear()
                has_data = False
        del pending[:start]
        if len(pending) > MESSAGE_LIMIT:
            raise _TooLong
    if has_data:
        yield bytes(data[:-1])


async def _limited_body(response: httpx.Response, limit: int | None = None) -> tuple[bytes, bool]:
    """At most `limit` (`MESSAGE_LIMIT`) bytes of the body, and whether that was all of it."""
    limit = MESSAGE_LIMIT if limit is None else limit
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > limit:
            return bytes(body[:limit]), False
    return bytes(body), True


async def _ended(process: asyncio.subprocess.Process, seconds: float) -> int | None:
    """Its exit code once it has exited, waiting at most `seconds` (`wait()` would wait for its
    pipes too, which what it started may hold open)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while process.returncode is None and loop.time() < deadline:
        await asyncio.sleep(0.01)
    return process.returncode


def _reply(request: dict[str, Any]) -> dict[str, Any]:
    """The answer to a request a server makes of the client: `ping` is answered, the rest
    "method not found"."""
    if request.get("method") == "ping":
        return {"jsonrpc": "2.0", "id": request["id"], "result": {}}
    return {
        "jsonrpc": "2.0",
        "id": request["id"],
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


def _json_text(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # orjson writes 254 levels at most; a server may send 1000
        return "(too deeply nested to show)"


def _kind(value: Any) -> str:
    kinds = {dict: "an object", list: "a list", str: "a string", bool: "true or false"}
    return "null" if value is None else kinds.get(type(value), "a number")


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


def _redacted(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "***")
    return text


def _error_text(error: Any, secrets: list[str]) -> str:
    """What a JSON-RPC `error` says, whatever its shape, as one short line."""
    message = error.get("message") if isinstance(error, dict) else error
    text = message if isinstance(message, str) else _json_text(error)
    return one_line(_redacted(text, secrets), ERROR_CHARS) or "(no message)"


def _tool(value: Any) -> dict[str, Any] | None:
    """What is kept of a listed tool, or None if it has no usable name (1 to 128 printable
    characters, no space: it is sent back, and shown)."""
    if not isinstance(value, dict):
        return None
    name = value.get("name")
    if not isinstance(name, str) or not 0 < len(name) <= 128:
        return None
    if not name.isprintable() or " " in name:
        return None
    tool: dict[str, Any] = {"name": name}
    if isinstance(value.get("description"), str):
        tool["description"] = value["description"][:DESCRIPTION_LIMIT]
    schema = value.get("inputSchema")
    if isinstance(schema, dict):
        text = _json_text(schema)
        if text.startswith("{") and len(text) <= SCHEMA_LIMIT:
            tool["inputSchema"] = schema
        else:  # what the model is shown instead
            why = f"{len(text)} characters" if text.startswith("{") else "too deeply nested"
            tool["inputSchema"] = {"type": "object", "description": f"(its schema: {why})"}
    return tool


def _part_text(part: Any) -> str | None:
    """A content part's text; a part that is not an object is skipped."""
    if not isinstance(part, dict):
        return None
    kind = part.get("type")
    if kind == "text":
        text = part.get("text", "")
        return text if isinstance(text, str) else _json_text(text)
    resource = part.get("resource")
    if kind == "resource" and isinstance(resource, dict) and isinstance(resource.get("text"), str):
        return str(resource["text"])
    label = one_line(kind, 40) if isinstance(kind, str) else ""
    return f"[{label or 'content'} omitted]"
