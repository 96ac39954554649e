"""Trajectories as OpenTelemetry spans (OTLP/JSON, GenAI semantic conventions), for Phoenix,
Langfuse or any OTLP backend: `agentlens convert --to otel`.

Per trajectory one trace: an `invoke_agent` root span (`gen_ai.agent.name`, `.version`); per
model response (a `turn`, or a step without one) a `chat` span carrying the model, its usage
(`gen_ai.usage.*`), the system messages since the response before as `gen_ai.system_instructions`,
the user messages since then (the task first) as `gen_ai.input.messages` and the response as
`gen_ai.output.messages` (text and tool calls); per tool call an `execute_tool` span
(`gen_ai.tool.name`, `gen_ai.tool.call.id`, `.arguments`, `.result`; status error when the call
failed, ok when it did not, unset with `agentlens.error_known` false when the trace does not
say). Id, task id, parent id, outcome, metadata (JSON), the run's reported totals and each response's price
go under `agentlens.*`, which `otel.py` reads back, as do what the source's reader made of each
call (`agentlens.tool.category`, `.command`, `.files`: only that reader knows its agent's tool
names), each step's own time (`agentlens.step.timestamp`, `agentlens.user.timestamps`,
`agentlens.system.timestamps`), the order of the messages before a response
(`agentlens.messages.order`), a message's observation and error flag, and on the root span the
messages after the last response (`agentlens.messages_after`) and a task that is not the first
user message (`agentlens.task`). A sub-agent is a trace of its own inside its parent's: an
`invoke_agent` span marked `agentlens.subagent`, under the `execute_tool` span of the call that
started it (which names it in `agentlens.subtrajectory`), or under the parent's root span when no
call did. Span ids are derived from the trajectory id, so a conversion is repeatable.

Times come from the steps. OTLP needs a time on every span, so where a step has none the clock
counts up in milliseconds from the last real one, or from the Unix epoch (1970) in a trace with
no timestamp at all, so that no made-up time passes for a real one; such a start or end carries
`agentlens.start_synthetic` / `agentlens.end_synthetic` true, and `otel.py` reads it as no time.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any, NamedTuple

import msgspec

from agentlens.trajectory import Step, Trajectory, stamps_before

SCOPE = {"name": "agentlens", "version": "1"}
OK, ERROR = 1, 2


def to_otlp(trajectories: list[Trajectory]) -> dict[str, Any]:
    spans = [span for t in trajectories for span in _trace(t, _Place(_hex(t.id, 32), t.id))]
    resource = {"attributes": [_attr("service.name", "agentlens")]}
    return {
        "resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": SCOPE, "spans": spans}]}]
    }


class _Place(NamedTuple):
    """Where an agent's spans go: its trace, the seed of its span ids (the trajectory id; a
    sub-agent's is its parent's and its place among the parent's sub-agents, since sub-agent ids
    need not be unique) and the span it hangs under (none for the run's root)."""

    trace: str
    key: str
    parent: str | None = None


def _trace(traj: Trajectory, place: _Place) -> list[dict[str, Any]]:
    trace, key = place.trace, place.key
    clock = _Clock(traj)
    root = _hex(key + "/root", 16)
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": traj.agent.name or "agent",
        "agentlens.trajectory.id": traj.id,
        "agentlens.outcome": traj.outcome.status,
        "agentlens.source.format": traj.source.format,
    }
    if place.parent is not None:
        attrs["agentlens.subagent"] = True
    if traj.agent.version:
        attrs["gen_ai.agent.version"] = traj.agent.version
    if traj.task_id:
        attrs["agentlens.task.id"] = traj.task_id
    if traj.parent_id:
        attrs["agentlens.parent_id"] = traj.parent_id
    attrs.update(_run_facts(traj))
    after = _after_last_response(traj.steps)
    if after:
        attrs["agentlens.messages_after"] = json.dumps(after)
    if not clock.real:
        attrs["agentlens.start_synthetic"] = attrs["agentlens.end_synthetic"] = True
    spans = []
    task = traj.task or next((s.text for s in traj.steps if s.kind == "user"), None)
    asked = stamps_before(traj.steps)
    for number, (before, turn) in enumerate(_turns(traj.steps)):
        said = [s.text for s in before if s.kind == "user"]
        extra = _step_times(before, turn[0]) | _message_order(before) | _agent_outcome(turn[0])
        if number == 0 and traj.task is not None and said[:1] != [traj.task]:
            attrs["agentlens.task"] = traj.task  # the task, not what the user said first
        if number == 0 and not said and task is not None:  # a backend shows the task as asked
            said, extra["agentlens.task_is_no_step"] = [task], True
        told = [s.text for s in before if s.kind == "system"]
        span_id = _hex(f"{key}/chat/{number}", 16)
        stamp = _ns(asked.get(turn[0].index))
        chat = _chat(trace, span_id, root, turn, (told, said), clock, stamp)
        chat["attributes"] += [_attr(k, v) for k, v in extra.items()]
        spans.append(chat)
        for step in (s for s in turn if s.kind == "tool"):
            spans.append(_tool(trace, root, key, step, clock, turn[0]))
    start = min((int(s["startTimeUnixNano"]) for s in spans), default=clock.now)
    end = max((int(s["endTimeUnixNano"]) for s in spans), default=clock.now)
    name = f"invoke_agent {attrs['gen_ai.agent.name']}"
    return [
        _span(trace, root, place.parent, name, attrs, start, end),
        *spans,
        *_subagents(traj, place, root),
    ]


def _subagents(traj: Trajectory, place: _Place, root: str) -> list[dict[str, Any]]:
    """Each sub-agent's spans, under the span of the call that started it (else the root)."""
    started: dict[str, str] = {}
    for step in traj.steps:
        if step.kind == "tool" and step.subtrajectory is not None:
            started.setdefault(step.subtrajectory, _hex(f"{place.key}/tool/{step.index}", 16))
    spans = []
    for number, sub in enumerate(traj.subtrajectories):
        under = started.get(sub.id, root)
        spans += _trace(sub, _Place(place.trace, f"{place.key}/sub/{number}", under))
    return spans


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
    if traj.metadata:
        facts["agentlens.metadata"] = msgspec.json.encode(traj.metadata).decode()
    return facts


def _step_times(before: list[Step], first: Step) -> dict[str, str]:
    """The steps' own times, where a span's cannot hold them (`otel.py` reads them back): the
    messages a response was asked with, and the response's own, since span ends are pushed
    apart (spans are read in start order) and a message has no span."""
    times: dict[str, str] = {}
    for kind in ("system", "user"):
        stamps = [_iso(s.timestamp) for s in before if s.kind == kind]
        if any(stamps):
            times[f"agentlens.{kind}.timestamps"] = json.dumps(stamps)
    if first.timestamp is not None:
        times["agentlens.step.timestamp"] = first.timestamp.isoformat()
    return times | _message_links(before)


def _message_links(before: list[Step]) -> dict[str, str]:
    """The sub-agents the messages a response was asked with link to (an ATIF summary handing
    over to one), one per message (`otel.py` reads them back)."""
    links: dict[str, str] = {}
    for kind in ("system", "user"):
        ids = [s.subtrajectory for s in before if s.kind == kind]
        if any(ids):
            links[f"agentlens.{kind}.subtrajectories"] = json.dumps(ids)
    return links


def _agent_outcome(first: Step) -> dict[str, Any]:
    """What a message without a call observed (a parse error the harness gave back) and
    whether it failed: no tool span holds them (`otel.py` reads them back)."""
    if first.kind != "agent":
        return {}
    found: dict[str, Any] = {}
    if first.observation is not None:
        found["agentlens.step.observation"] = first.observation
    if first.is_error is not None:
        found["agentlens.step.is_error"] = first.is_error
    if first.subtrajectory is not None:
        found["agentlens.subtrajectory"] = first.subtrajectory
    return found


def _message_order(before: list[Step]) -> dict[str, str]:
    """The order of system (`s`) and user (`u`) messages, where it is not all system first:
    the two go in different attributes of a chat span."""
    order = "".join("s" if s.kind == "system" else "u" for s in before)
    return {} if order == "".join(sorted(order)) else {"agentlens.messages.order": order}


def _iso(when: datetime | None) -> str | None:
    return when.isoformat() if when is not None else None


def _after_last_response(steps: list[Step]) -> list[dict[str, Any]]:
    """The user and system messages after the last response (a user's last word, a "request
    cancelled"): no chat span asks with them, so the root span carries them for `otel.py`."""
    after: list[dict[str, Any]] = []
    for step in steps:
        if step.kind in ("agent", "tool"):
            after = []
        elif step.kind in ("user", "system"):
            said = {"role": step.kind, "content": step.text, "timestamp": _iso(step.timestamp)}
            after.append(said | _link(step))
    return after


def _link(step: Step) -> dict[str, str]:
    return {} if step.subtrajectory is None else {"subtrajectory": step.subtrajectory}


def _turns(steps: list[Step]) -> list[tuple[list[Step], list[Step]]]:
    """Model responses (the agent and tool steps of one `turn`; a step without one stands
    alone), each with the user and system messages that came since the response before it."""
    turns: list[tuple[list[Step], list[Step]]] = []
    said: list[Step] = []
    last: int | None = None
    for step in steps:
        if step.kind in ("user", "system"):
            said.append(step)
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
    messages: tuple[list[str], list[str]],
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
    told, said = messages
    if told:  # the system's messages since the last answer
        attrs["gen_ai.system_instructions"] = json.dumps(
            [{"type": "text", "content": text} for text in told]
        )
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
    last = clock.now  # spans are read in start order: this one starts after the last one
    answered = clock.at(first)  # the span lasts from the request to the response, as a call does
    real_start = asked is not None and last <= asked < answered
    # a request at the end of the last span starts 1 ns after it: spans are read in start order
    start = max(asked, last + 1) if asked is not None and real_start else last + 1
    _mark_synthetic(attrs, start=not real_start, end=first.timestamp is None)
    return _span(trace, span_id, root, f"chat {first.model or ''}".strip(), attrs, start, answered)


def _mark_synthetic(attrs: dict[str, Any], *, start: bool, end: bool) -> None:
    if start:
        attrs["agentlens.start_synthetic"] = True
    if end:
        attrs["agentlens.end_synthetic"] = True


def _tool(
    trace: str, root: str, key: str, step: Step, clock: _Clock, first: Step
) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": step.tool_name or "unknown",
        "gen_ai.tool.call.arguments": json.dumps(step.arguments),
    }
    if step.call_id:
        attrs["gen_ai.tool.call.id"] = step.call_id
    if step.subtrajectory is not None:
        attrs["agentlens.subtrajectory"] = step.subtrajectory
    if step.observation is not None:
        attrs["gen_ai.tool.call.result"] = step.observation
    attrs.update(_tool_view(step))
    if step.timestamp is not None and step.timestamp != first.timestamp:  # its own, not its turn's
        attrs["agentlens.step.timestamp"] = step.timestamp.isoformat()
    if step.is_error is None:  # an unset status reads as success in a foreign capture
        attrs["agentlens.error_known"] = False
    _mark_synthetic(attrs, start=True, end=True)  # the call's own time is in no step
    start = clock.after()
    span_id = _hex(f"{key}/tool/{step.index}", 16)
    span = _span(trace, span_id, root, f"execute_tool {step.tool_name}", attrs, start, start + 1)
    if step.is_error is not None:
        span["status"] = (
            {"code": ERROR, "message": "tool call failed"} if step.is_error else {"code": OK}
        )
    return span


def _tool_view(step: Step) -> dict[str, Any]:
    """What the reader made of the call (`otel.py` reads it back): the category, command and
    files come from the source format's own tool names (Copilot's `view`, Grok's
    `run_terminal_command`), which a reader of OTel alone cannot know."""
    view: dict[str, Any] = {"agentlens.tool.files": json.dumps(step.files)}
    if step.category is not None:
        view["agentlens.tool.category"] = str(step.category)
    if step.command is not None:
        view["agentlens.tool.command"] = step.command
    return view


class _Clock:
    """Span times in nanoseconds: a step's own timestamp, else 1 ms after the previous span (from
    the epoch when the trajectory has no timestamp: `real` is then False)."""

    def __init__(self, traj: Trajectory) -> None:
        stamps = [s.timestamp for s in traj.steps if s.timestamp is not None]
        self.real = bool(stamps)
        self.now = int(stamps[0].timestamp() * 1e9) if stamps else 0

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
