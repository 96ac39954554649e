"""The viewer's Starlette app: the JSON API under /api, the static pages at /, strict headers.

Traces are hostile input, so the pages never turn data into markup, and the Content-Security-Policy
forbids inline scripts and styles and any other origin, so a slip there still cannot run code.
Only the local host names are accepted by default: a page on another site that rebinds its DNS
name to 127.0.0.1 would otherwise be able to read the store through this server.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentlens.errors import ConfigError, StoreError
from agentlens.store import open_store
from agentlens.store.paging import RunShapes
from agentlens.viewer import LOCAL_HOSTS
from agentlens.viewer.api import ROUTES, BadRequest, TrajectoryCache
from agentlens.viewer.token_gate import TokenGate

STATIC = Path(__file__).parent / "static"
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; frame-ancestors 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]


class SecurityHeaders:
    """Adds the strict headers to every response; API answers are never cached."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cache = b"no-store" if scope["path"].startswith("/api/") else b"no-cache"

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [h for h in message.get("headers", []) if h[0] != b"cache-control"]
                message["headers"] = [*headers, *HEADERS, (b"cache-control", cache)]
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _error(status: int, message: str) -> Response:
    return JSONResponse({"error": message}, status_code=status)


async def _store_error(request: Request, exc: Exception) -> Response:
    reason = exc.reason if isinstance(exc, StoreError) else str(exc)
    return _error(404, reason)


async def _bad_request(request: Request, exc: Exception) -> Response:
    return _error(400, str(exc))


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return _error(exc.status_code, exc.detail)


async def _internal_error(request: Request, exc: Exception) -> Response:
    return _error(500, f"internal error ({type(exc).__name__}); see the server's output")


async def _no_such_api(request: Request) -> Response:
    return _error(404, f"no API route {request.url.path}")


def build_app(
    store_url: str, *, allowed_hosts: list[str] | None = None, token: str | None = None
) -> Starlette:
    """The app over the store at `store_url`, opened when the app starts and closed when it stops."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        app.state.store = open_store(store_url)
        app.state.trajectories = TrajectoryCache()
        app.state.run_shapes = RunShapes()
        try:
            yield
        finally:
            app.state.store.close()

    routes = [
        *ROUTES,
        Route("/api/{rest:path}", _no_such_api),
        Mount("/", StaticFiles(directory=STATIC, html=True)),
    ]
    middleware = [
        Middleware(SecurityHeaders),
        Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts or LOCAL_HOSTS),
    ]
    if token:  # off loopback (`agentlens view --host`): checked after the Host
        middleware.append(Middleware(TokenGate, token=token))
    handlers = {
        StoreError: _store_error,
        BadRequest: _bad_request,
        ConfigError: _bad_request,
        HTTPException: _http_error,
        Exception: _internal_error,
    }
    return Starlette(
        routes=routes, middleware=middleware, exception_handlers=handlers, lifespan=lifespan
    )
