"""The built-in agent's MCP tools: the scenario's servers started (or reached) for the session, their
tools listed in its prompt, and a reply's ```` ```mcp ```` block (`{"server", "tool",
"arguments"}`) called on the runner's side, so the model's shell never holds the servers' tokens.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from agentlens.scenarios.mcp_client import McpError, McpSession, one_line, open_session

FENCE = "```mcp"
DESCRIPTION_CHARS = 200
SCHEMA_CHARS = 400
PROMPT_CHARS = 20_000
"""The most the tool list adds to the system prompt (a server may list a thousand tools)."""
PROMPT = """
You can also call tools of MCP servers. To call one, reply with a short THOUGHT, then exactly one
block (instead of a bash block):
```mcp
{{"server": "<server>", "tool": "<tool>", "arguments": {{...}}}}
```
The tools:
{tools}"""


class McpTools:
    """The servers of one session; `start` reads the config file the runner wrote."""

    def __init__(self, config: Path, log_dir: Path) -> None:
        self.config = config
        self.log_dir = log_dir
        self.sessions: dict[str, McpSession] = {}

    async def start(self, workdir: Path) -> None:
        """Each server runs in the workspace unless its entry says `cwd` (as agent CLIs do)."""
        servers = orjson.loads(self.config.read_bytes()).get("mcpServers") or {}
        self.config.unlink()  # the model's shell runs as this user: leave it no token to read
        for name, spec in servers.items():
            log = self.log_dir / f"mcp-{name}.log"
            session = open_session(name, spec, log=log, workdir=workdir, writable=[workdir])
            self.sessions[name] = session
            await session.start()

    def prompt(self) -> str:
        """What the system prompt adds: the block's form and the tools, as many as
        `PROMPT_CHARS` hold (empty without any)."""
        lines: list[str] = []
        budget, unlisted = PROMPT_CHARS, 0
        for name, session in self.sessions.items():
            for tool in session.tools:
                schema = orjson.dumps(tool.get("inputSchema") or {}).decode()
                line = (
                    f"- {name}/{tool['name']}: {_short(tool.get('description'), DESCRIPTION_CHARS)}"
                    f" arguments: {_short(schema, SCHEMA_CHARS)}"
                )
                if len(line) >= budget:
                    unlisted += 1
                    continue
                budget -= len(line) + 1
                lines.append(line)
        if unlisted:
            lines.append(f"({unlisted} more tools are not listed: there is no room for them)")
        return PROMPT.format(tools="\n".join(lines)) if lines else ""

    async def call(self, block: str) -> tuple[str, str, dict[str, Any], str, bool]:
        """(server, tool, arguments, output, is_error) of one block; a malformed block, an
        unknown tool or a call the server fails (it timed out, it exited) is an error the model
        sees, not a failure of the run. The server's stderr is left out of it: it may show
        what the server was given."""
        try:
            asked = orjson.loads(block)
        except orjson.JSONDecodeError as exc:
            return "", "", {}, f"Invalid mcp block (not JSON: {exc}).", True
        if not isinstance(asked, dict):
            return "", "", {}, "Invalid mcp block: it must be a JSON object.", True
        server, tool = str(asked.get("server", "")), str(asked.get("tool", ""))
        given = asked.get("arguments")
        given = {} if given is None else given  # none given, or null: a tool without any
        if not isinstance(given, dict):
            return server, tool, {}, "Invalid mcp block: 'arguments' must be a JSON object.", True
        arguments: dict[str, Any] = given
        session = self.sessions.get(server)
        if session is None or tool not in {t["name"] for t in session.tools}:
            return server, tool, arguments, f"No tool {tool!r} on a server {server!r}.", True
        try:
            orjson.dumps(arguments)
        except TypeError as exc:  # orjson reads 1024 levels but writes 254
            return server, tool, arguments, f"Invalid mcp block: its arguments: {exc}.", True
        try:
            output, failed = await session.call(tool, arguments)
        except McpError as exc:
            return server, tool, arguments, f"The call failed: {exc.brief}.", True
        return server, tool, arguments, output, failed

    async def close(self) -> None:
        for session in self.sessions.values():
            await session.close()


def mcp_blocks(text: str) -> list[tuple[int, str]]:
    """(start, body) of each ```` ```mcp ```` block: its body runs from the line after the fence
    to the next line that starts with ```` ``` ```` (`str.find`: linear on any reply)."""
    found = []
    position = 0
    while (start := text.find(FENCE, position)) >= 0:
        body = text.find("\n", start)
        close = text.find("\n```", body) if body >= 0 else -1
        if close < 0 or text[start + len(FENCE) : body].strip():
            position = start + len(FENCE)
            continue
        found.append((start, text[body + 1 : close]))
        position = close + 4
    return found


def _short(text: Any, limit: int) -> str:
    return one_line(str(text or ""), limit)
