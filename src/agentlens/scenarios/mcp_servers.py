"""A scenario's MCP servers as written (spec §2.3 `mcp_servers[]`), checked when the scenario
file is read: each entry is `{name, command, args?, env?, cwd?}` (a local server on stdio) or
`{name, url, type?: http | sse, headers?}` (a remote one). In any string, `$NAME$` stands for the
environment variable NAME and `{workdir}` for the agent's workspace; `agentlens.scenarios.mcp`
fills them in when a run hands the servers to its agent."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import orjson

LEGACY_SSE = (
    "type sse is the older HTTP+SSE transport, which AgentLens's MCP client does not speak (streamable "
    "HTTP, `type: http`, replaced it in MCP 2025-03-26)"
)
VARIABLE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)\$")
NAME = re.compile(r"[A-Za-z0-9_-]+")
LOCAL_KEYS = {"command": str, "args": list, "env": dict, "cwd": str}
REMOTE_KEYS = {"url": str, "type": str, "headers": dict}
REMOTE_TYPES = ("http", "sse")


@dataclass(frozen=True)
class McpServer:
    name: str
    spec: dict[str, Any]
    """The entry as written, less its name: the config file's value for this server."""

    @property
    def variables(self) -> list[str]:
        """The environment variables its placeholders name, in order of first use."""
        names = VARIABLE.findall(orjson.dumps(self.spec).decode())
        return list(dict.fromkeys(names))


def parse_servers(value: Any) -> list[McpServer]:
    """The scenario's `mcp_servers`, checked; a problem raises ValueError naming the entry."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"mcp_servers must be a list of servers, not {value!r:.60}")
    servers = [_server(number, entry) for number, entry in enumerate(value, 1)]
    names = [s.name for s in servers]
    twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if twice is not None:
        raise ValueError(f"mcp_servers: server name {twice!r} is given twice")
    return servers


def _server(number: int, entry: Any) -> McpServer:
    where = f"mcp_servers[{number}]"
    if not isinstance(entry, dict):
        raise ValueError(f"{where} must be an object, not {entry!r:.60}")
    name = entry.get("name")
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ValueError(f"{where}: 'name' must be letters, digits, '_' or '-', not {name!r:.60}")
    where = f"MCP server {name!r}"
    spec = {k: v for k, v in entry.items() if k != "name"}
    local, remote = "command" in spec, "url" in spec
    if local == remote:
        raise ValueError(f"{where} needs either a 'command' (stdio) or a 'url' (http, sse)")
    allowed = LOCAL_KEYS if local else REMOTE_KEYS
    for key, item in spec.items():
        if key not in allowed:
            raise ValueError(f"{where}: key {key!r} is not one of {', '.join(allowed)}")
        if not isinstance(item, allowed[key]):
            raise ValueError(f"{where}: {key!r} must be a {allowed[key].__name__}")
    _strings(where, spec.get("args", []), "args")
    for key in ("env", "headers"):
        _strings(where, list(spec.get(key, {}).values()), key)
    if spec.get("type", "http") not in REMOTE_TYPES:
        raise ValueError(f"{where}: 'type' must be http or sse, not {spec['type']!r:.40}")
    return McpServer(name, spec)


def _strings(where: str, values: list[Any], key: str) -> None:
    if not all(isinstance(v, str) for v in values):
        raise ValueError(f"{where}: every value of {key!r} must be a string")
