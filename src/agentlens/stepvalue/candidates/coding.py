"""Transitions of a coding trajectory (canonical steps), shared by the fault-localisation and
outcome candidate sources."""

from __future__ import annotations

from agentlens.stepvalue.model import StepCost, Transition
from agentlens.stepvalue.phases import coding_phases
from agentlens.stepvalue.projection import agent_steps, coding_states
from agentlens.trajectory import Step, Trajectory


def coding_transitions(traj: Trajectory, *, max_steps: int | None = None) -> tuple[Transition, ...]:
    """One transition per agent step (tool call or agent message), at most `max_steps`."""
    phase_of = {id(s): p for s, p in zip(traj.steps, coding_phases(traj), strict=True)}
    steps = agent_steps(traj)[:max_steps] if max_steps is not None else agent_steps(traj)
    states = coding_states(traj, upto=len(steps))
    previous = {id(s): traj.steps[i - 1] if i else None for i, s in enumerate(traj.steps)}
    return tuple(
        Transition(
            step_id=f"step-{step.index}",
            index=step.index,
            before=states[i],
            after=states[i + 1],
            phase=phase_of[id(step)],
            cost=step_cost(step, previous[id(step)]),
        )
        for i, step in enumerate(steps)
    )


def step_cost(step: Step, previous: Step | None) -> StepCost:
    """The step's own tokens (`Step.usage`), 1 tool call for a tool step, and its latency: the time
    since the previous step's timestamp (None when either timestamp is missing, or when they go
    backwards: a negative latency would turn the step's cost into a gain). Traces record no risk
    score."""
    latency = None
    if step.timestamp is not None and previous is not None and previous.timestamp is not None:
        try:
            latency = (step.timestamp - previous.timestamp).total_seconds() * 1000
        except TypeError:  # one timestamp with a zone, one without: not comparable
            latency = None
    if latency is not None and latency < 0:
        latency = None
    usage = step.usage
    return StepCost(
        prompt_tokens=usage.prompt_tokens if usage else None,
        completion_tokens=usage.completion_tokens if usage else None,
        tool_calls=1 if step.kind == "tool" else 0,
        latency_ms=latency,
    )
