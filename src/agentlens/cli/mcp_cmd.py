"""`agentlens mcp SCENARIO…`: start (or reach) each MCP server the scenarios name, as a run
would, and list its tools, so a config is known to work before a run depends on it."""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import click
from rich.table import Table
from rich.text import Text

from agentlens.cli._app import console
from agentlens.cli._sandbox_option import sandbox_option
from agentlens.list_text import first_few
from agentlens.scenarios.mcp import filled, missing_variables
from agentlens.scenarios.mcp_client import McpError, one_line, open_session
from agentlens.scenarios.mcp_servers import McpServer
from agentlens.scenarios.scenario import Scenario, load_scenario
from agentlens.verification import isolation

SHOWN_TOOLS = 6
CELL_CHARS = 1000


@click.command()
@click.argument("scenarios", nargs=-1, required=True, type=click.Path(exists=True))
@click.option(
    "--project",
    type=click.Path(exists=True, file_okay=False),
    default=None,
    help="The folder {workdir} stands for (default: each scenario's project_path, else here).",
)
@click.option("--json", "as_json", is_flag=True, help="One object per server.")
@sandbox_option
def mcp(scenarios: tuple[str, ...], project: str | None, as_json: bool) -> int:
    """Check the MCP servers of scenario files. Each is started, asked for its tools, stopped.
    Exit 1 if one fails or needs an environment variable that is not set."""
    rows = []
    for path in scenarios:
        scenario = load_scenario(Path(path) / "config.json" if Path(path).is_dir() else path)
        for server in scenario.mcp_servers:
            with isolation.policy(scenario.sandbox_policy()):  # as in a run: network, limits
                tools, left_out, result = asyncio.run(_check(server, _workdir(scenario, project)))
            where = str(server.spec.get("url") or server.spec.get("command"))
            rows.append(_Row(scenario.name, server.name, where, tools, left_out, result))
    if as_json:
        console.print_json(json.dumps([asdict(row) for row in rows]))
    elif rows:
        table = Table("scenario", "server", "where", "tools", "result")
        for row in rows:
            shown = f"{len(row.tools)}: {first_few(row.tools, SHOWN_TOOLS)}" if row.tools else "–"
            shown += (
                f" ({row.left_out} left out: no usable name, or too many)" if row.left_out else ""
            )
            cells = (row.scenario, row.server, row.where, shown, row.result)
            table.add_row(*(_cell(cell) for cell in cells))
        console.print(table)
    else:
        console.print("no MCP servers in these scenarios")
    return 1 if any(row.result != "ok" for row in rows) else 0


@dataclass
class _Row:
    scenario: str
    server: str
    where: str
    tools: list[str]
    left_out: int
    """Tools the server listed that were not kept (`McpSession.left_out`)."""
    result: str


async def _check(server: McpServer, workdir: Path) -> tuple[list[str], int, str]:
    missing = missing_variables([server], os.environ)
    if missing:
        return [], 0, f"not set: {', '.join(m.split(': ', 1)[1] for m in missing)}"
    spec = filled([server], workdir, os.environ)["mcpServers"][server.name]
    with tempfile.TemporaryDirectory(prefix="agentlens-mcp-check-") as logs:
        session = open_session(server.name, spec, log=Path(logs) / "stderr.log", workdir=workdir)
        try:
            await session.start()
        except McpError as exc:
            return [], 0, str(exc)
        finally:
            await session.close()
    return [str(tool["name"]) for tool in session.tools], session.left_out, "ok"


def _cell(text: str) -> Text:
    """A server's words as plain text: no markup, no escape sequence reaches the terminal."""
    return Text(one_line(text, CELL_CHARS))


def _workdir(scenario: Scenario, project: str | None) -> Path:
    if project is not None:
        return Path(project).resolve()
    if scenario.project_path and scenario.directory is not None:
        return (scenario.directory / scenario.project_path).resolve()
    return Path.cwd()
