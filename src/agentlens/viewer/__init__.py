"""The browser viewer: a small read-only JSON API over the results store plus prebuilt static
pages (`static/`), served locally by `agentlens view`. Starlette and uvicorn are the optional
extra `viewer`; nothing here imports them until a server or app is asked for."""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

from agentlens.errors import MissingDependencyError

if TYPE_CHECKING:
    from starlette.applications import Starlette

__all__ = ["LOCAL_HOSTS", "create_app", "require"]

LOCAL_HOSTS = ["127.0.0.1", "localhost", "::1", "[::1]"]
"""The Host names the app accepts by default (no other: DNS rebinding)."""


def require(module: str) -> None:
    """Fail with the pip hint when an optional viewer dependency is not installed."""
    try:
        found = importlib.util.find_spec(module) is not None
    except ValueError:  # a module set to None in sys.modules, as a test does to hide it
        found = False
    if not found:
        raise MissingDependencyError("the viewer", "viewer", module)


def create_app(
    store_url: str, *, allowed_hosts: list[str] | None = None, token: str | None = None
) -> Starlette:
    require("starlette")
    from agentlens.viewer.app import build_app

    return build_app(store_url, allowed_hosts=allowed_hosts, token=token)
