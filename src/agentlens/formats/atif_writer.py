"""Write a canonical `Trajectory` as an ATIF-v1.8 document (a JSON-ready dict).

Consecutive `tool` steps of one turn become one ATIF agent step with several `tool_calls`; every
other step becomes one ATIF step. What ATIF has no field for (category, files, `is_error`, the
stored stage, task id, outcome) travels in the `extra` objects under the key `agentlens`, which
`AtifReader` reads back, so canonical -> ATIF -> canonical keeps steps, calls, observations and
usage. Sub-agents are embedded as `subagent_trajectories` (v1.7+).
"""

from __future__ import annotations

from typing import Any

from agentlens.trajectory import Step, Trajectory, Usage

VERSION = "ATIF-v1.8"
PLACEHOLDER = "(no steps recorded)"


def to_atif(trajectory: Trajectory) -> dict[str, Any]:
    """The ATIF-v1.8 document for one trajectory (sub-agents embedded)."""
    steps = [_atif_step(i, group) for i, group in enumerate(turn_groups(trajectory.steps), start=1)]
    if not steps:  # ATIF requires at least one step
        steps = [
            {
                "step_id": 1,
                "source": "system",
                "message": PLACEHOLDER,
                "extra": _ours(placeholder=True),
            }
        ]
    doc: dict[str, Any] = {
        "schema_version": VERSION,
        "session_id": trajectory.id,
        "trajectory_id": trajectory.id,
        "agent": _agent(trajectory),
        "steps": steps,
        "final_metrics": _final_metrics(trajectory),
        "extra": _ours(
            task_id=trajectory.task_id,
            task=trajectory.task,
            outcome=_outcome(trajectory),
            source_format=trajectory.source.format,
            source_path=trajectory.source.path,
            metadata=trajectory.metadata,  # e.g. a scenario run's termination and tags
        ),
    }
    if trajectory.subtrajectories:
        doc["subagent_trajectories"] = [to_atif(sub) for sub in trajectory.subtrajectories]
    return doc


def turn_groups(steps: list[Step]) -> list[list[Step]]:
    """Steps as model turns: the tool calls of one response (same `turn`, no text of their own)
    join the first; every other step stands alone."""
    groups: list[list[Step]] = []
    for step in steps:
        last = groups[-1] if groups else None
        joins = (
            last is not None
            and step.kind == "tool"
            and last[0].kind == "tool"
            and step.turn is not None
            and step.turn == last[0].turn
            and not step.text
        )
        if joins and last is not None:
            last.append(step)
        else:
            groups.append([step])
    return groups


def _atif_step(step_id: int, group: list[Step]) -> dict[str, Any]:
    first = group[0]
    out: dict[str, Any] = {"step_id": step_id}
    if first.timestamp is not None:
        out["timestamp"] = first.timestamp.isoformat()
    out["source"] = "agent" if first.kind in ("agent", "tool") else first.kind
    out["message"] = first.text
    if first.kind == "tool":
        out["tool_calls"] = [_tool_call(s, first) for s in group]
        results = [_result(s) for s in group if s.observation is not None or s.subtrajectory]
    else:
        results = [_result(first)] if first.observation is not None or first.subtrajectory else []
    if results and first.kind != "user":
        out["observation"] = {"results": results}
    if out["source"] == "agent":
        out.update(_agent_fields(group))
    own = first.kind != "tool"  # a tool step's stage and error ride on its call
    extra = _ours(
        stored_stage=first.stored_stage if own else None, is_error=first.is_error if own else None
    )
    extra["agentlens"]["turn"] = first.turn  # kept even when None, so no turn is invented
    if first.kind == "user" and first.observation is not None:
        extra["agentlens"]["observation"] = first.observation
    out["extra"] = extra
    return out


def _agent_fields(group: list[Step]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if group[0].model:
        fields["model_name"] = group[0].model
    usages = [s.usage for s in group if s.usage is not None]
    costs = [s.cost for s in group if s.cost is not None]
    metrics: dict[str, Any] = _tokens(sum(usages[1:], usages[0]), "") if usages else {}
    if costs:
        metrics["cost_usd"] = sum(costs)
    if metrics:
        fields["metrics"] = metrics
    return fields


def _tokens(usage: Usage, prefix: str) -> dict[str, int]:
    """Token counts, written only when known: zeros would read back as a run that used none."""
    return {
        f"{prefix}prompt_tokens": usage.prompt_tokens,
        f"{prefix}completion_tokens": usage.completion_tokens,
        f"{prefix}cached_tokens": usage.cached_tokens,
    }


def _tool_call(step: Step, first: Step) -> dict[str, Any]:
    own_time = step.timestamp if step.timestamp != first.timestamp else None
    return {
        "tool_call_id": _call_id(step),
        "function_name": step.tool_name or "unknown",
        "arguments": step.arguments,
        "extra": _ours(
            category=str(step.category) if step.category is not None else None,
            files=step.files,
            command=step.command,
            is_error=step.is_error,
            subtrajectory=step.subtrajectory,
            stored_stage=step.stored_stage,
            timestamp=own_time.isoformat() if own_time is not None else None,
            call_id_made=True if step.call_id is None else None,  # ATIF needs one: ours is not kept
        ),
    }


def _result(step: Step) -> dict[str, Any]:
    result: dict[str, Any] = {}
    if step.kind == "tool":
        result["source_call_id"] = _call_id(step)
    if step.observation is not None:
        result["content"] = step.observation
    if step.subtrajectory:
        result["subagent_trajectory_ref"] = [{"trajectory_id": step.subtrajectory}]
    return result


def _call_id(step: Step) -> str:
    return step.call_id or f"call_{step.index}"


def _agent(trajectory: Trajectory) -> dict[str, Any]:
    agent: dict[str, Any] = {
        "name": trajectory.agent.name or "unknown",
        "version": trajectory.agent.version or "unknown",
    }
    if trajectory.model:
        agent["model_name"] = trajectory.model
    made = [k for k in ("name", "version") if getattr(trajectory.agent, k) is None]
    if made:  # ATIF requires both: say which are stand-ins, so they read back as unknown
        agent["extra"] = _ours(made=made)
    return agent


def _final_metrics(trajectory: Trajectory) -> dict[str, Any]:
    usage = trajectory.reported_usage or trajectory.usage_known()
    final: dict[str, Any] = _tokens(usage, "total_") if usage is not None else {}
    cost = (
        trajectory.reported_cost
        if trajectory.reported_cost is not None
        else trajectory.cost_total()
    )
    if cost is not None:
        final["total_cost_usd"] = cost
    return final


def _outcome(trajectory: Trajectory) -> dict[str, Any] | None:
    outcome = trajectory.outcome
    if outcome.status == "unknown" and outcome.source is None:
        return None
    return {"status": outcome.status, "source": outcome.source, "detail": outcome.detail}


def _ours(**fields: Any) -> dict[str, Any]:
    return {"agentlens": {k: v for k, v in fields.items() if v is not None}}
