"""Scenario runs (spec-reviews §1.1, §2, §4): an agent under test works in a copy of a project
while an LLM-simulated user with a persona drives the dialog, until a stop rule fires; each
scenario × persona gives one trajectory, formally verified, ready for `review`, `qi`, `sxs`.

    fold.py            scenarios × personas, attempts, the simulator-spend budget, output folder
    session.py         one dialog and its stop rules
    simulated_user.py  the simulator's prompt, `terminate_dialog`, re-sampling
    agent_view.py      what the simulator sees of a turn (the spec's truncation limits)
    agents/            the agents under test (built-in shell agent, any agent CLI)
    workspace.py       the project copy, its base commit and diff
    personas.py        default / helpful / toxic, or a file
    scenario.py        a scenario file (verifiers, limits, the simulator's instruction) and its formal checks
    records.py         what a scenario run keeps in the results store
    stop_signals.py    SIGTERM / SIGHUP stop a run like Ctrl-C
    ide_errors.py      ruff's error rules standing in for the IDE's errors
    ide_syntax.py      tree-sitter's syntax errors for Java, JS/TS, Go, Rust
    mcp_servers.py     the scenario's MCP servers as written, checked
    mcp.py             the scenario's MCP servers, as a config file for the agent
    mcp_client/        an MCP client (the built-in agent's, `agentlens mcp`): session, stdio, streamable_http, limits
    scale_out.py       pairs as Ray tasks (`--engine ray`)
"""

from agentlens.scenarios.fold import Fold, FoldResult, RunSettings, load_fold, run_fold
from agentlens.scenarios.personas import Persona, load_persona
from agentlens.scenarios.session import SessionResult, run_session
from agentlens.scenarios.simulated_user import SimulatedUser, SimulatorSettings
from agentlens.scenarios.turns import AgentTurn, Stop, Termination, UserTurn

__all__ = [
    "AgentTurn",
    "Fold",
    "FoldResult",
    "Persona",
    "RunSettings",
    "SessionResult",
    "SimulatedUser",
    "SimulatorSettings",
    "Stop",
    "Termination",
    "UserTurn",
    "load_fold",
    "load_persona",
    "run_fold",
    "run_session",
]
