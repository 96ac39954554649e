"""Agents under test (the `ScenarioAgent` seam in `agentlens.seams`), one file each:
`bash.py`, the built-in shell agent on any chat model; `command.py`, any agent CLI whose stdout
AgentLens can read. `agent_factory` turns the CLI's `--agent` string into a per-session builder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentlens.errors import ConfigError
from agentlens.providers import get_provider
from agentlens.scenarios.agents._mcp_tools import McpTools
from agentlens.scenarios.agents.bash import BashAgent, BashAgentSettings
from agentlens.scenarios.agents.command import PLACEHOLDER, AgentFailure, CommandAgent
from agentlens.scenarios.fold import AgentFactory
from agentlens.seams import ScenarioAgent

__all__ = [
    "AgentFailure",
    "BashAgent",
    "BashAgentSettings",
    "CommandAgent",
    "agent_factory",
]


def agent_factory(
    spec: str,
    *,
    resume: str | None = None,
    bash_settings: BashAgentSettings | None = None,
    cache: bool = True,
) -> AgentFactory:
    """`bash:<model or role>` (e.g. `bash:openai:gpt-4.1`, `bash:agent`) or `cmd:<command line>`."""
    kind, sep, rest = spec.partition(":")
    if not sep or not rest.strip():
        raise ConfigError(f"agent {spec!r} is not 'bash:<model>' or 'cmd:<command line>'")
    if kind == "cmd":
        probe = CommandAgent(rest, resume=resume, trace_dir=Path())  # a bad command line fails now
        program = None if PLACEHOLDER.search(probe.first[0]) else probe.first[0]
        return _Commands(rest, resume, takes_mcp=probe.takes_mcp, program=program)
    if kind == "bash":
        # fail now on a bad model string, a missing key or model file, before any workspace
        get_provider(rest, role="agent", cache=cache).check_ready()
        return _BuiltIn(rest, bash_settings, cache)
    raise ConfigError(f"agent kind {kind!r} unknown in {spec!r}: use bash: or cmd:")


@dataclass
class _Commands:
    command: str
    resume: str | None
    takes_mcp: bool
    program: str | None
    """What must be on PATH wherever the agent runs (None: only the workspace will tell)."""
    own_mcp_client = False  # the agent CLI connects to the servers itself

    def __call__(self, folder: Path, mcp_config: Path | None = None) -> ScenarioAgent:
        return CommandAgent(
            self.command, resume=self.resume, trace_dir=folder, mcp_config=mcp_config
        )


@dataclass
class _BuiltIn:
    model: str
    settings: BashAgentSettings | None
    cache: bool
    takes_mcp = True
    own_mcp_client = True  # AgentLens's (`_mcp_tools.py`)

    def __call__(self, folder: Path, mcp_config: Path | None = None) -> ScenarioAgent:
        client = get_provider(self.model, role="agent", cache=self.cache)
        tools = McpTools(mcp_config, folder) if mcp_config is not None else None
        return BashAgent(client, self.settings, mcp=tools)
