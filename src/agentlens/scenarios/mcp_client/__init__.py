"""A small MCP client, for the built-in agent and `agentlens mcp`: start or reach a server
from a scenario's config entry, `initialize`, list its tools, call them, and close it. JSON-RPC
2.0 over stdio (one message a line; the server's whole process group is stopped at the end) or
over streamable HTTP (a POST per message, answered with JSON or an event stream).

A local server runs with this process's environment plus its entry's `env` (it needs its token);
the model's shell commands never see either. Requests a server makes of the client are answered
"method not found" (roots, sampling: this client offers none), except `ping`.

A server and all it sends are untrusted: every wait has a limit (`limits.TIMEOUT_S`), every
message a size (`limits.MESSAGE_LIMIT`), its stderr log a size; what it says in an error reaches a message as one
line without control characters, its entry's secrets blanked out; tools without a usable name are
left out, and what is kept of each tool is small.

The package holds one file per part: `session` (the protocol, shared by both transports),
`stdio` and `streamable_http` (the transports), `limits`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentlens.scenarios.mcp_client.session import McpError, McpSession, one_line
from agentlens.scenarios.mcp_client.stdio import StdioSession
from agentlens.scenarios.mcp_client.streamable_http import HttpSession
from agentlens.scenarios.mcp_servers import LEGACY_SSE

__all__ = ["HttpSession", "McpError", "McpSession", "StdioSession", "one_line", "open_session"]


def open_session(
    name: str,
    spec: dict[str, Any],
    *,
    log: Path,
    workdir: Path | None = None,
    writable: Sequence[Path] = (),
) -> McpSession:
    """The session an entry of an `mcpServers` config asks for (not started yet); a local server
    runs in `workdir` unless its entry says `cwd` (as agent CLIs run theirs in the project)."""
    if spec.get("type") == "sse":
        raise McpError(f"MCP server {name!r}: {LEGACY_SSE}")
    if "url" in spec:
        return HttpSession(name, spec)
    if workdir is not None:
        spec = {"cwd": str(workdir), **spec}
    return StdioSession(name, spec, log=log, writable=writable)
