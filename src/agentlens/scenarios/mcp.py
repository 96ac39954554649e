"""The MCP servers a scenario gives its agent (spec §2.3 `mcp_servers[]`, e.g. the GitHub MCP with
a `$GITHUB_TOKEN$` placeholder).

An agent CLI starts its own MCP servers from a config file, so the runner does not start them: it
writes the scenario's servers, placeholders filled, to an `mcpServers` JSON file (the shape Claude
Code's `--mcp-config`, Cursor and Gemini CLI read) and hands its path to the agent as
`{mcp_config}`, with `$NAME$` and `{workdir}` filled in (`agentlens.scenarios.mcp_servers` has the
entries' shape).

The filled file holds secrets, so it is written to a private temporary folder (mode 0700, file
0600) for the attempt and removed after it; the output folder keeps only the server names.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from agentlens.scenarios.mcp_servers import VARIABLE, McpServer
from agentlens.verification import isolation


def missing_variables(servers: list[McpServer], environ: Mapping[str, str]) -> list[str]:
    """`server: $NAME$` for each placeholder the environment does not set."""
    return [f"{s.name}: ${v}$" for s in servers for v in s.variables if v not in environ]


def filled(servers: list[McpServer], workdir: Path, environ: Mapping[str, str]) -> dict[str, Any]:
    """The config file's document: every placeholder replaced (all must be set)."""

    def fill(value: Any) -> Any:
        if isinstance(value, str):
            text = VARIABLE.sub(lambda match: environ[match[1]], value)
            return text.replace("{workdir}", str(workdir))
        if isinstance(value, list):
            return [fill(item) for item in value]
        if isinstance(value, dict):
            return {key: fill(item) for key, item in value.items()}
        return value

    return {"mcpServers": {s.name: fill(s.spec) for s in servers}}


@contextmanager
def mcp_config(
    servers: list[McpServer], workdir: Path, environ: Mapping[str, str] | None = None
) -> Iterator[Path]:
    """The filled config file for one attempt, private to this user, gone afterwards. With no
    servers it lists none, so an agent command that names `{mcp_config}` still gets a file."""
    document = filled(servers, workdir, os.environ if environ is None else environ)
    folder = Path(tempfile.mkdtemp(prefix="agentlens-mcp-"))  # mkdtemp makes it 0700
    try:
        path = folder / "mcp.json"
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(orjson.dumps(document, option=orjson.OPT_INDENT_2))
        isolation.share_with_sandbox(folder, path)
        yield path
    finally:
        shutil.rmtree(folder, ignore_errors=True)
