"""The viewer off loopback: every request must carry the viewer's token.

The token comes as `Authorization: Bearer TOKEN`, as `?token=TOKEN` (the link printed at start,
which also sets a same-site, HTTP-only cookie so the page's own requests carry it), or as that
cookie. Anything else is 401. The comparison is constant-time."""

from __future__ import annotations

import hmac
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "agentlens_view_token"


class TokenGate:
    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given, from_query = self._given(scope)
        if not any(hmac.compare_digest(value, self.token) for value in given):
            await _unauthorized(send)
            return
        if not from_query:
            await self.app(scope, receive, send)
            return

        async def with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                cookie = f"{COOKIE}={self.token.decode()}; HttpOnly; SameSite=Strict; Path=/"
                message["headers"] = [*message.get("headers", []), (b"set-cookie", cookie.encode())]
            await send(message)

        await self.app(scope, receive, with_cookie)

    def _given(self, scope: Scope) -> tuple[list[bytes], bool]:
        headers = dict(scope.get("headers", []))
        auth = headers.get(b"authorization", b"")
        if auth[:7].lower() == b"bearer ":
            return [auth[7:].strip()], False
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if "token" in query:
            return [query["token"][0].encode()], True
        return _cookies(headers.get(b"cookie", b"")), False


def _cookies(header: bytes) -> list[bytes]:
    """Every value of our cookie, read pair by pair as browsers send them. Not `SimpleCookie`: it
    drops every cookie after one it cannot parse (a JSON value, a space). Cookies are shared by
    all ports of a host, so another local app's cookie, or one named like ours on a longer path
    (sent first), would otherwise lock the user out."""
    pairs = (pair.strip().partition(b"=") for pair in header.split(b";"))
    return [value.strip() for name, _, value in pairs if name.strip() == COOKIE.encode()]


async def _unauthorized(send: Send) -> None:
    body = b'{"error": "this viewer needs its token (the link printed when it started)"}'
    await send({"type": "http.response.start", "status": 401, "headers": [
        (b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
        (b"content-length", str(len(body)).encode())]})  # fmt: skip
    await send({"type": "http.response.body", "body": body})
