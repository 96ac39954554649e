"""The streamable HTTP transport: a POST per message to the entry's `url` with its `headers`,
answered with JSON or an event stream, both read within `limits.MESSAGE_LIMIT`."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import orjson

from agentlens.scenarios.mcp_client import limits
from agentlens.scenarios.mcp_client.session import (
    PROTOCOL_VERSION,
    McpSession,
    json_object,
    one_line,
    redacted,
    reply,
)


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
        self._client = httpx.AsyncClient(headers=headers, timeout=limits.TIMEOUT_S)

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is None:
            return
        if self._session_id is not None:  # the spec's way to end a session; optional for both
            with contextlib.suppress(httpx.HTTPError, httpx.InvalidURL, TimeoutError):
                await asyncio.wait_for(
                    client.delete(str(self.spec["url"]), headers=self._headers()),
                    limits.CLOSE_WAIT_S,
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
                    raise self._error(f"sent a message longer than {limits.MESSAGE_LIMIT} bytes")
                answer = json_object(body)
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
            reason = one_line(str(exc) or type(exc).__name__, limits.ERROR_CHARS)
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
            body, _ = await _limited_body(response, 4 * limits.ERROR_CHARS)
            text = redacted(body.decode("utf-8", "replace"), self._secrets())
            said = one_line(text, limits.ERROR_CHARS)
            raise self._error(f"answered HTTP {status}{': ' + said if said else ''}")

    async def _from_stream(
        self, response: httpx.Response, number: int, method: str
    ) -> dict[str, Any]:
        try:
            async for data in _events(response):
                answer = json_object(data)
                if answer is None:
                    continue
                if "method" in answer:
                    if "id" in answer:
                        await self._notify(reply(answer))
                elif answer.get("id") == number:
                    return answer
        except _TooLong:
            raise self._error(f"sent a message longer than {limits.MESSAGE_LIMIT} bytes") from None
        raise self._error(f"ended its event stream without answering {method}")


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
                if len(data) > limits.MESSAGE_LIMIT:
                    raise _TooLong
            elif not line and has_data:  # an event ends
                yield bytes(data[:-1])
                data.clear()
                has_data = False
        del pending[:start]
        if len(pending) > limits.MESSAGE_LIMIT:
            raise _TooLong
    if has_data:
        yield bytes(data[:-1])


async def _limited_body(response: httpx.Response, limit: int | None = None) -> tuple[bytes, bool]:
    """At most `limit` (`MESSAGE_LIMIT`) bytes of the body, and whether that was all of it."""
    limit = limits.MESSAGE_LIMIT if limit is None else limit
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > limit:
            return bytes(body[:limit]), False
    return bytes(body), True
