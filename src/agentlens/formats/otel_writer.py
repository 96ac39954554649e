"""Trajectories as OpenTelemetry spans (OTLP/JSON, GenAI semantic conventions), for Phoenix,
Langfuse or any OTLP backend: `agentlens convert --to otel`.

Per trajectory one trace: an `invoke_agent` root span; per model response (a `turn`, or a step
without one) a `chat` span carrying the model, its usage (`gen_ai.usage.*`), the user messages
since the response before (the task first) as `gen_ai.input.messages` and the response as
`gen_ai.output.messages` (text and tool calls);
per tool call an `execute_tool` span (`gen_ai.tool.name`, `gen_ai.tool.call.id`, `.arguments`,
`.result`, an error status when the call failed). Id, task id, outcome, the run's reported
totals and each response's price go under `agentlens.*`, which `otel.py` reads back. Span ids
are derived from the trajectory id, so a conversion is repeatable; times come from the steps,
or count up in milliseconds when a step has none.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from agentlens.trajectory import Step, Trajectory, stamps_before

SCOPE = {"name": "agentlens", "version": "1"}
ERROR = 2


def to_otlp(trajectories: list[Trajectory]) -> dict[str, Any]:
    spans = [span for trajectory in trajectories for span in _trace(trajectory)]
    resource = {"attributes": [_attr("service.name", "agentlens")]}
    return {
        "resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": SCOPE, "spans": spans}]}]
    }


def _trace(traj: Trajectory) -> list[dict[str, Any]]:
    trace = _hex(traj.id, 32)
    clock = _Clock(traj)
    root = _hex(traj.id + "/root", 16)
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": traj.agent.name or "agent",
        "agentlens.trajectory.id": traj.id,
        "agentlens.outcome": traj.outcome.status,
        "agentlens.source.format": traj.source.format,
    }
    if traj.task_id:
        attrs["agentlens.task.id"] = traj.task_id
    attrs.update(_run_facts(traj))
    spans = []
    task = traj.task or next((s.text for s in traj.steps if s.kind == "user"), None)
    asked = stamps_before(traj.steps)
    for number, (said, turn) in enumerate(_turns(traj.steps)):
        if number == 0:  # the task first, then what else the user said before the first answer
            said = ([task] if task is not None else []) + said[1:]
        span_id = _hex(f"{traj.id}/chat/{number}", 16)
        spans.append(_chat(trace, span_id, root, turn, said, clock, _ns(asked.get(turn[0].index))))
        for step in (s for s in turn if s.kind == "tool"):
            spans.append(_tool(trace, root, traj.id, step, clock))
    start = min((s["startTimeUnixNano"] for s in spans), default=clock.now)
    end = max((s["endTimeUnixNano"] for s in spans), default=clock.now)
    return [
        _span(trace, root, None, f"invoke_agent {attrs['gen_ai.agent.name']}", attrs, start, end),
        *spans,
    ]


def _run_facts(traj: Trajectory) -> dict[str, Any]:
    """What only AgentLens reads back (`otel.py`): where the verdict came from and the run's own
    totals. Under `agentlens.*`, so a backend does not add them to the spans' token counts."""
    facts: dict[str, Any] = {}
    if traj.outcome.source:
        facts["agentlens.outcome.source"] = traj.outcome.source
    if traj.outcome.detail:
        facts["agentlens.outcome.detail"] = traj.outcome.detail
    if traj.reported_usage is not None:
        facts["agentlens.reported_usage.input_tokens"] = traj.reported_usage.prompt_tokens
        facts["agentlens.reported_usage.output_tokens"] = traj.reported_usage.completion_tokens
        facts["agentlens.reported_usage.cache_read.input_tokens"] = (
            traj.reported_usage.cached_tokens
        )
    if traj.reported_cost is not None:
        facts["agentlens.reported_cost_usd"] = float(traj.reported_cost)
    return facts


def _turns(steps: list[Step]) -> list[tuple[list[str], list[Step]]]:
    """Model responses (the agent and tool steps of one `turn`; a step without one stands
    alone), each with the user messages that came since the response before it."""
    turns: list[tuple[list[str], list[Step]]] = []
    said: list[str] = []
    last: int | None = None
    for step in steps:
        if step.kind == "user":
            said.append(step.text)
        elif step.kind in ("agent", "tool"):
            # a call joins its response; a message never does (a chat span holds one text,
            # and a message after the calls, as `codex exec` gives, would be lost)
            joins = step.kind == "tool" and step.turn is not None and step.turn == last
            if turns and not said and joins:
                turns[-1][1].append(step)
            else:
                turns.append((said, [step]))
                said = []
            last = step.turn
    return turns


def _ns(when: datetime | None) -> int | None:
    return None if when is None else int(when.timestamp() * 1e9)


def _chat(
    trace: str,
    span_id: str,
    root: str,
    turn: list[Step],
    said: list[str],
    clock: _Clock,
    asked: int | None,
) -> dict[str, Any]:
    first = turn[0]
    parts: list[dict[str, Any]] = [{"type": "text", "content": first.text}] if first.text else []
    parts += [
        {"type": "tool_call", "id": s.call_id, "name": s.tool_name, "arguments": s.arguments}
        for s in turn if s.kind == "tool"
    ]  # fmt: skip
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": parts}]),
    }
    if first.model:
        attrs["gen_ai.request.model"] = attrs["gen_ai.response.model"] = first.model
    if said:  # what is new in this call's input: the user's messages since the last answer
        attrs["gen_ai.input.messages"] = json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": text}]} for text in said]
        )
    usages = [s.usage for s in turn if s.usage is not None]
    if usages:
        usage = sum(usages[1:], usages[0])
        attrs["gen_ai.usage.input_tokens"] = usage.prompt_tokens
        attrs["gen_ai.usage.output_tokens"] = usage.completion_tokens
        attrs["gen_ai.usage.cache_read.input_tokens"] = usage.cached_tokens
    costs = [s.cost for s in turn if s.cost is not None]
    if costs:
        attrs["agentlens.cost_usd"] = float(sum(costs))
    before = clock.now  # spans are read in start order: this one starts after the last one
    answered = clock.at(first)  # the span lasts from the request to the response, as a call does
    start = asked if asked is not None and before < asked < answered else before + 1
    return _span(trace, span_id, root, f"chat {first.model or ''}".strip(), attrs, start, answered)


def _tool(trace: str, root: str, traj_id: str, step: Step, clock: _Clock) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": step.tool_name or "unknown",
        "gen_ai.tool.call.arguments": json.dumps(step.arguments),
    }
    if step.call_id:
        attrs["gen_ai.tool.call.id"] = step.call_id
    if step.observation is not None:
        attrs["gen_ai.tool.call.result"] = step.observation
    start = clock.after()
    span_id = _hex(f"{traj_id}/tool/{step.index}", 16)
    span = _span(trace, span_id, root, f"execute_tool {step.tool_name}", attrs, start, start + 1)
    if step.is_error:
        span["status"] = {"code": ERROR, "message": "tool call failed"}
    return span


class _Clock:
    """Span times in nanoseconds: a step's own timestamp, else 1 ms after the previous span."""

    def __init__(self, traj: Trajectory) -> None:
        stamps = [s.timestamp for s in traj.steps if s.timestamp is not None]
        self.now = int(stamps[0].timestamp() * 1e9) if stamps else 1_700_000_000 * 10**9

    def at(self, step: Step) -> int:
        own = int(step.timestamp.timestamp() * 1e9) if step.timestamp is not None else 0
        self.now = max(own, self.now + 1_000_000)
        return self.now

    def after(self) -> int:
        self.now += 1_000_000
        return self.now


def _span(
    trace: str,
    span_id: str,
    parent: str | None,
    name: str,
    attrs: dict[str, Any],
    start: int,
    end: int,
) -> dict[str, Any]:
    span: dict[str, Any] = {
        "traceId": trace, "spanId": span_id, "name": name, "kind": 1,
        "startTimeUnixNano": str(start), "endTimeUnixNano": str(end),
        "attributes": [_attr(k, v) for k, v in attrs.items()], "status": {},
    }  # fmt: skip
    if parent:
        span["parentSpanId"] = parent
    return span


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": str(value)}}


def _hex(seed: str, width: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:width]
