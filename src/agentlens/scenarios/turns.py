"""Value types of a scenario run: what the agent did in one turn, what the simulated user said,
and why a run ended (spec §4.3: each stop rule records its termination reason)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from agentlens.trajectory import Step


class Stop(StrEnum):
    """The stop rules of spec §4.3, in the spec's order, then ours: the simulated user failing
    (its model call failed after retries, or it would not open the dialog) and the workspace
    setup failing (a preprocessor) end the run too, and are retried like an agent failure."""

    USER_FINISHED = "user_finished"
    MAX_USER_MESSAGES = "max_user_messages"
    SCENARIO_TIMEOUT = "scenario_timeout"
    AGENT_TURN_TIMEOUT = "agent_turn_timeout"
    AGENT_ERROR = "agent_error"
    NO_ACTIONS = "no_actions"
    SIMULATOR_ERROR = "simulator_error"
    SETUP_ERROR = "setup_error"

    @property
    def gets_final_user_turn(self) -> bool:
        """After a timeout or an agent failure the simulator still answers once, logged only."""
        return self in (Stop.SCENARIO_TIMEOUT, Stop.AGENT_TURN_TIMEOUT, Stop.AGENT_ERROR)

    @property
    def is_failed_run(self) -> bool:
        """Failed runs are retried and left out of the denominators (spec §4.4)."""
        return self in (Stop.AGENT_ERROR, Stop.SIMULATOR_ERROR, Stop.SETUP_ERROR)


@dataclass
class Termination:
    stop: Stop
    reason: str
    """The released runner's wording, e.g. "Reached the limit of user messages"."""


@dataclass
class AgentTurn:
    """The agent's answer to one user message: its steps in order (tool calls with their
    results, and messages) and the reply the user sees (its last message, possibly empty)."""

    steps: list[Step] = field(default_factory=list)
    reply: str = ""

    @property
    def actions(self) -> int:
        return sum(1 for s in self.steps if s.kind == "tool")


@dataclass
class UserTurn:
    """The simulated user's next message, or its decision to end the dialog."""

    text: str = ""
    terminate: str | None = None
    """Set when the simulator called `terminate_dialog`: its `termination_reason`."""
    cost: float | None = None
    resamples: int = 0
