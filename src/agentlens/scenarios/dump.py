"""`run --dump-prompts DIR`: the first prompt of each model a scenario run would call, written
without calling one, with secrets masked as the saved session masks them (`agentlens.redaction`).

Per scenario × persona (attempt 1): the simulated user's opening request, unless the scenario
fixes the first message; and the built-in bash agent's first request when that first message is
fixed. Later prompts hold the models' own answers, so they cannot exist before the run.
"""

from __future__ import annotations

from pathlib import Path

from agentlens.providers.prompt_dump import PlannedCall, dump_prompts
from agentlens.scenarios.agents.bash import SYSTEM as BASH_SYSTEM
from agentlens.scenarios.agents.bash import BashAgent, BashAgentSettings
from agentlens.scenarios.agents.command import CommandAgent
from agentlens.scenarios.fold import Fold
from agentlens.scenarios.outbound import redacted
from agentlens.scenarios.personas import Persona
from agentlens.scenarios.scenario import Scenario
from agentlens.scenarios.simulated_user import FIRST_PROMPT, SimulatedUser, SimulatorSettings


class _Named:
    """The simulator's name only: planning its prompt calls no model."""

    def __init__(self, name: str) -> None:
        self.name = name


def first_prompts(
    fold: Fold, agent_spec: str, simulator: str, out: Path, settings: SimulatorSettings
) -> list[PlannedCall]:
    bash = agent_spec.startswith("bash:")
    agent_name = BashAgent.name if bash else CommandAgent(agent_spec[4:], trace_dir=Path()).name
    calls = []
    for scenario in fold.scenarios:
        for persona in fold.personas:
            pair = f"{scenario.name}/{persona.name}"
            folder = out / "sessions" / scenario.name / persona.name / "attempt-1"
            fixed = scenario.first_user_message if scenario.fixed_first_message else None
            if fixed is None:
                user = _user(simulator, persona, scenario, agent_name, folder, settings)
                calls.append(PlannedCall(pair, "simulator-first", user, None, settings.max_tokens))
            elif bash:
                agent = [
                    {"role": "system", "content": BASH_SYSTEM},
                    {"role": "user", "content": fixed},
                ]
                calls.append(
                    PlannedCall(pair, "agent-first", agent, None, BashAgentSettings().max_tokens)
                )
    for call in calls:  # masked as `outbound.send` masks them (not under `--no-redact`)
        call.messages = redacted(call.messages)
    return calls


def _user(
    simulator: str, persona: Persona, scenario: Scenario, agent: str, folder: Path,
    settings: SimulatorSettings,
) -> list[dict[str, str]]:  # fmt: skip
    user = SimulatedUser(
        _Named(simulator),  # type: ignore[arg-type]
        persona, scenario, agent_name=agent, project=str(folder / "repo"), session_key="",
        settings=settings,
    )  # fmt: skip
    user.messages.append({"role": "user", "content": FIRST_PROMPT})
    return [dict(m) for m in user._request_messages()]


def write_first_prompts(
    fold: Fold, agent_spec: str, simulator: str, out: Path, settings: SimulatorSettings,
    directory: str | Path,
) -> list[Path]:  # fmt: skip
    return dump_prompts(first_prompts(fold, agent_spec, simulator, out, settings), directory)
