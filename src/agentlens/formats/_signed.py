"""Token counts and costs below zero: no usage at all, yet they would lower every total they
join (a run shown as "tokens -5 in"). Readers take numbers as the file gives them; this one
walk, after any reader, names the first that is negative."""

from __future__ import annotations

from collections.abc import Iterator

from agentlens.trajectory import Trajectory, Usage

USAGE_FIELDS = ("prompt_tokens", "completion_tokens", "cached_tokens")


def first_negative(trajectory: Trajectory, at: str = "") -> str | None:
    """`<where>: <value>` of the first negative count or cost in `trajectory` (its sub-agents
    too), or None."""
    for where, value in _numbers(trajectory, at):
        if value < 0:
            return f"{where}: {value}"
    return None


def _numbers(trajectory: Trajectory, at: str) -> Iterator[tuple[str, float]]:
    yield from _usage(trajectory.reported_usage, f"{at}reported_usage")
    if trajectory.reported_cost is not None:
        yield f"{at}reported_cost", trajectory.reported_cost
    for i, step in enumerate(trajectory.steps):
        yield from _usage(step.usage, f"{at}steps[{i}].usage")
        if step.cost is not None:
            yield f"{at}steps[{i}].cost", step.cost
    for i, sub in enumerate(trajectory.subtrajectories):
        yield from _numbers(sub, f"{at}subtrajectories[{i}].")


def _usage(usage: Usage | None, where: str) -> Iterator[tuple[str, int]]:
    if usage is not None:
        yield from ((f"{where}.{name}", getattr(usage, name)) for name in USAGE_FIELDS)
