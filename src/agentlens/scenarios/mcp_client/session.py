"""What every MCP session does whatever its transport: `initialize`, list the tools (paged,
capped), call one, and say what went wrong in one line without the entry's secrets."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import orjson

from agentlens import __version__
from agentlens.errors import AgentLensError
from agentlens.redaction import clip_head, clip_tail, masked, masked_head
from agentlens.scenarios.mcp_client import limits

PROTOCOL_VERSION = "2025-06-18"

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
    if len(text) > limit:  # masked before the cut, with its line breaks (YAML's `key: value`)
        text = masked(text)
    text = _ESCAPES.sub("", text)
    text = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    if len(text) <= limit:
        return text
    return "…" + clip_tail(text, limit - 1) if end else clip_head(text, limit - 1) + "…"


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
            self.tools = await asyncio.wait_for(self._all_tools(), limits.TIMEOUT_S)
        except TimeoutError:
            raise self._error(f"did not list its tools in {limits.TIMEOUT_S:g}s") from None

    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """The tool's text output (at most `OUTPUT_LIMIT` characters) and whether it reports
        an error."""
        result = await self.request("tools/call", {"name": tool, "arguments": arguments})
        content = result.get("content")
        parts = [_part_text(part) for part in (content if isinstance(content, list) else [])]
        text = "\n".join(part for part in parts if part is not None)
        if not parts and "structuredContent" in result:
            text = _json_text(result["structuredContent"])
        if len(text) > limits.OUTPUT_LIMIT:
            more = len(text) - limits.OUTPUT_LIMIT
            kept = masked_head(text, limits.OUTPUT_LIMIT)
            text = f"{kept}\n[... {more} more characters of output not kept]"
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
            return await asyncio.wait_for(work, limits.TIMEOUT_S)
        except TimeoutError:
            raise self._error(
                f"did not answer {method} in {limits.TIMEOUT_S:g}s{self._silence()}", stderr=True
            ) from None

    async def _all_tools(self) -> list[dict[str, Any]]:
        tools: dict[str, dict[str, Any]] = {}
        cursor: str | None = None
        cursors: set[str] = set()
        for _ in range(limits.MAX_PAGES):
            page = await self.request("tools/list", {"cursor": cursor} if cursor else {})
            listed = page.get("tools") or []
            if not isinstance(listed, list):
                raise self._error(f"answered tools/list with tools that are {_kind(listed)}")
            for value in listed:
                tool = _tool(value)
                if tool is None or (tool["name"] not in tools and len(tools) >= limits.MAX_TOOLS):
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


def reply(request: dict[str, Any]) -> dict[str, Any]:
    """The answer to a request a server makes of the client: `ping` is answered, the rest
    "method not found"."""
    if request.get("method") == "ping":
        return {"jsonrpc": "2.0", "id": request["id"], "result": {}}
    return {
        "jsonrpc": "2.0",
        "id": request["id"],
        "error": {"code": -32601, "message": "method not found"},
    }


def json_object(data: bytes) -> dict[str, Any] | None:
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


def redacted(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "***")
    return text


def _error_text(error: Any, secrets: list[str]) -> str:
    """What a JSON-RPC `error` says, whatever its shape, as one short line."""
    message = error.get("message") if isinstance(error, dict) else error
    text = message if isinstance(message, str) else _json_text(error)
    return one_line(redacted(text, secrets), limits.ERROR_CHARS) or "(no message)"


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
        tool["description"] = masked_head(value["description"], limits.DESCRIPTION_LIMIT)
    schema = value.get("inputSchema")
    if isinstance(schema, dict):
        text = _json_text(schema)
        if text.startswith("{") and len(text) <= limits.SCHEMA_LIMIT:
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
