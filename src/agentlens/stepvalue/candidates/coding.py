"""Transitions of a coding trajectory (canonical steps), shared by the fault-localisation and
outcome candidate sources."""

from __future__ import annotations

from agentlens.stepvalue.model import Transition
from agentlens.stepvalue.phases import coding_phases
from agentlens.stepvalue.projection import agent_steps, coding_states
from agentlens.trajectory import Trajectory


def coding_transitions(traj: Trajectory, *, max_steps: int | None = None) -> tuple[Transition, ...]:
    """One transition per agent step (tool call or agent message), at most `max_steps`."""
    phase_of = {id(s): p for s, p in zip(traj.steps, coding_phases(traj), strict=True)}
    steps = agent_steps(traj)[:max_steps] if max_steps is not None else agent_steps(traj)
    states = coding_states(traj, upto=len(steps))
    return tuple(
        Transition(
            step_id=f"step-{step.index}",
            index=step.index,
            before=states[i],
            after=states[i + 1],
            phase=phase_of[id(step)],
        )
        for i, step in enumerate(steps)
    )
