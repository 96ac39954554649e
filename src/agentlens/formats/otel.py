"""OpenTelemetry traces of AI agents, as OTLP/JSON: one trajectory per trace.

Spans are read with either GenAI convention (`_otel_spans`). In start-time order, an LLM span
is a model response: its tool calls become tool steps (its text on the first, its usage on the
first), or, without calls, an agent step; user messages in its input become user steps before
it when the input holds only what is new (no assistant message). A tool span is the call's execution: matched to the
call by `tool_call.id` (else by name, in order), it gives the observation and, from an error
status, `is_error`; a tool span no response asked for is a tool step of its own. The first
user message of the first LLM span is the task. The agent span names the agent; spans of no
known kind (HTTP, DB) are counted in metadata, not read as steps. An agent span that a call
started is a sub-agent, read the same way into the run's `subtrajectories` and linked from the
call's step (`_otel_agents`). An attribute of a type (or, in JSON text, a shape) the reader
cannot use is read as absent, said in one warning for the file (`_otel_values`).

A trace `convert --to otel` wrote carries what OTel has no place for under `agentlens.*`
(`otel_writer`): each call's category, command and files, each step's own time, the messages
after the last response; these are read back as written, so a run round-trips step by step.

A `.json` file holds one export request (`{"resourceSpans": [...]}`); a `.jsonl` file (the
collector's file exporter) one per line. `convert --to otel` writes this shape back
(`otel_writer`).
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict, deque
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from agentlens import redaction
from agentlens.errors import SchemaError
from agentlens.formats import _otel_spans as o
from agentlens.formats._json import ReadGuard, iter_jsonl, loads
from agentlens.formats._otel_agents import Agents, partition
from agentlens.formats._reader_base import SuffixReader
from agentlens.formats._steps import classify, parse_time
from agentlens.list_text import first_few
from agentlens.trajectory import (
    Agent,
    Outcome,
    Source,
    Step,
    StepKind,
    ToolCategory,
    Trajectory,
    Usage,
)

HEAD = re.compile(rb'^\s*\{\s*"resourceSpans"\s*:')


class OtelReader(SuffixReader):
    name: ClassVar[str] = "otel"
    suffixes: ClassVar[tuple[str, ...]] = (".json", ".jsonl")

    @classmethod
    def handles_bytes(cls, head: bytes) -> bool:
        return bool(HEAD.match(head[:512]))

    def read(self, path: Path, data: bytes) -> Iterator[Trajectory]:
        with ReadGuard(path, self.name, loose=True):
            if path.suffix == ".jsonl":
                documents = [doc for _, doc in iter_jsonl(path, data, self.name)]
            else:
                documents = [loads(path, data, self.name)]
            if not any(isinstance(d, dict) and "resourceSpans" in d for d in documents):
                # forced with --format otel on another agent's file: say so, do not read 0 runs
                raise SchemaError(path, "no resourceSpans: not an OTLP JSON export", self.name)
            spans = [s for i, d in enumerate(documents) for s in o.spans_of(d, f"request {i + 1}")]
            traces: dict[str, list[o.Span]] = defaultdict(list)
            for span in spans:
                traces[span.trace].append(span)
            built = [_run(path, trace, group) for trace, group in traces.items()]
        note = _absent_note(spans)
        if note is not None:  # the same line on each: said once for the file
            for trajectory in built:
                trajectory.add_warnings([note])
        yield from built


SHOWN = 5
NAME_SHOWN = 80  # characters of a key or span id (from the file) that a warning shows


def _named(text: str) -> str:
    """A key or span id as a warning shows it: masked first, then cut to `NAME_SHOWN` (the
    read's redaction pass would miss a key cut in half)."""
    text = redaction.masked(text)
    return text if len(text) <= NAME_SHOWN else redaction.clip_head(text, NAME_SHOWN - 1) + "…"


def _named_with_what(odd: tuple[str, str]) -> str:
    key, what = odd
    return f"{_named(key)} ({what})"


def _absent_note(spans: list[o.Span]) -> str | None:
    """One line for the file: the values read as absent (of a type or shape the reader cannot
    use, `_otel_values`), each named with what it was, the first `SHOWN` of them."""
    odd: dict[str, str] = {}
    for span in spans:
        for key, what in span.odd.items():
            odd.setdefault(key, what)
    if not odd:
        return None
    named = first_few(list(odd.items()), SHOWN, _named_with_what)
    values = "value" if len(odd) == 1 else "values"
    unusable = f"of a type or shape the reader cannot use, read as absent: {named}"
    return f"{len(odd)} {values} {unusable}"


class _Steps:
    def __init__(self) -> None:
        self.steps: list[Step] = []
        # calls whose tool span has not come yet, by call id and by tool name, in order (a call
        # claimed through one is dropped from the other when reached)
        self.open_ids: dict[str, deque[Step]] = defaultdict(deque)
        self.open_names: dict[str, deque[Step]] = defaultdict(deque)
        self.claimed: set[int] = set()  # id() of the calls claimed
        self.turn = -1
        self.called: dict[str, Step] = {}  # tool span id -> its call's step

    def response(self, span: o.Span) -> None:
        self.turn += 1
        said, calls = o.output_of(span)
        common: dict[str, Any] = {
            "turn": self.turn,
            "model": o.model_of(span),
            "timestamp": _own_time(span) or _time(span, answered=True),
        }
        first = len(self.steps)
        for i, call in enumerate(calls):
            args = o.arguments_dict(call.arguments)
            step = _tool_step(call.name, args, call.call_id, text=said if i == 0 else "", **common)
            self.steps.append(step)
            if isinstance(call.call_id, str):  # a tool span's call id is a string, if any
                self.open_ids[call.call_id].append(step)
            self.open_names[call.name].append(step)
        if not calls:
            self.steps.append(Step(index=0, kind="agent", text=said, **common, **_outcome_of(span)))
        tokens = o.tokens_of(span)
        if tokens is not None:
            self.steps[first].usage = Usage(
                prompt_tokens=tokens[0], completion_tokens=tokens[1], cached_tokens=tokens[2]
            )
        self.steps[first].cost = _dollars(span.attrs.get("agentlens.cost_usd"))

    def execution(self, span: o.Span) -> None:
        name, call_id, arguments, result = o.tool_run(span)
        step = self._claim(name, call_id)
        if step is None:
            args = o.arguments_dict(arguments)
            step = _tool_step(name, args, call_id, timestamp=_time(span))
            self.steps.append(step)
        self.called[span.span_id] = step
        linked = span.attrs.get("agentlens.subtrajectory")  # `convert --to otel`'s
        step.subtrajectory = linked if isinstance(linked, str) else step.subtrajectory
        step.observation = result if result is not None else span.error
        known = span.attrs.get("agentlens.error_known") is not False  # `convert --to otel`'s
        step.is_error = span.error is not None if known else None
        _carried_view(step, span.attrs)
        step.timestamp = _own_time(span) or step.timestamp

    def _claim(self, name: str, call_id: str | None) -> Step | None:
        """The first open call with this id; else (a span naming no id, or an id no open call
        has: another exporter's, or one shuffled) the first open call of this tool."""
        step = self._first_open(self.open_ids.get(call_id) if call_id is not None else None)
        return step or self._first_open(self.open_names.get(name))

    def _first_open(self, waiting: deque[Step] | None) -> Step | None:
        """Calls claimed already are popped as they are passed over, once each: linear time."""
        while waiting:
            step = waiting.popleft()
            if id(step) not in self.claimed:
                self.claimed.add(id(step))
                return step
        return None


def _outcome_of(span: o.Span) -> dict[str, Any]:
    """A message's observation and error flag, as `convert --to otel` wrote them."""
    observation = span.attrs.get("agentlens.step.observation")
    is_error = span.attrs.get("agentlens.step.is_error")
    return {
        "observation": observation if isinstance(observation, str) else None,
        "is_error": is_error if isinstance(is_error, bool) else None,
        "subtrajectory": _text(span.attrs.get("agentlens.subtrajectory")),
    }


def _tool_step(name: str, args: dict[str, Any], call_id: str | None, **fields: Any) -> Step:
    view = classify(name, args)
    return Step(
        index=0, kind="tool", tool_name=name, category=view.category, call_id=call_id,
        arguments=args, command=view.command, files=view.files, **fields,
    )  # fmt: skip


def _carried_view(step: Step, attrs: dict[str, Any]) -> None:
    """The category, command and files `convert --to otel` wrote (`agentlens.tool.*`): the
    source format's reader knew its agent's tool names; classifying the name again here
    does not (Copilot's `view` would read as `other`)."""
    files = _loads_strings(attrs.get("agentlens.tool.files"))
    if files is None:  # not written by `convert --to otel`: the names' own classification
        return
    category = attrs.get("agentlens.tool.category")
    command = attrs.get("agentlens.tool.command")
    step.category = ToolCategory(category) if category in CATEGORIES else None
    step.command = command if isinstance(command, str) else None
    step.files = files


CATEGORIES = frozenset(map(str, ToolCategory))


def _loads_strings(raw: Any) -> list[str] | None:
    """A JSON array of strings, or None when `raw` is not one."""
    found = o.loads(raw)
    ok = isinstance(found, list) and all(isinstance(item, str) for item in found)
    return found if ok else None


def _loads_list(raw: Any) -> list[Any]:
    """A JSON array written as a string attribute; [] when it is not one."""
    found = o.loads(raw)
    return found if isinstance(found, list) else []


def _run(path: Path, trace: str, spans: list[o.Span]) -> Trajectory:
    agents = partition(spans)
    traj = _agent(path, trace, agents, None)
    if agents.ambiguous:
        traj.add_warnings([_ambiguous_note(agents.ambiguous)])
    return traj


def _ambiguous_note(ids: list[str]) -> str:
    """Parent ids that more than one span has: which span is meant is unknown, so the spans
    naming one are read as under none of them (`_otel_agents.partition`)."""
    named = first_few(ids, SHOWN, _named)
    if len(ids) == 1:
        return f"span id {named} is shared by several spans: the spans under it are the run's own"
    return (
        f"span ids {named} are each shared by several spans: the spans under them are the run's own"
    )


def _agent(path: Path, trace: str, agents: Agents, root: o.Span | None) -> Trajectory:
    """The run (`root` None) or one sub-agent, with its own sub-agents."""
    key = root.span_id if root is not None else None
    traj, called = _trajectory(path, trace, agents.spans.get(key, []), root)
    for sub_root in agents.subagents.get(key, []):
        sub = _agent(path, trace, agents, sub_root)
        sub.parent_id = sub.parent_id or traj.id
        traj.subtrajectories.append(sub)
        call = agents.caller.get(sub_root.span_id)  # None: no call started it
        step = called.get(call) if call is not None else None
        if step is not None and step.subtrajectory is None:
            step.subtrajectory = sub.id
    return traj


def _trajectory(
    path: Path, trace: str, spans: list[o.Span], root: o.Span | None
) -> tuple[Trajectory, dict[str, Step]]:
    spans = sorted(spans, key=lambda s: s.start)
    builder = _Steps()
    kinds = Counter(s.kind for s in spans)
    llm = [s for s in spans if s.kind == "llm"]
    task = o.first_user_text(llm[0]) if llm else None
    for span in spans:
        if span.kind == "llm":
            builder.steps += _asked(span, task if span is llm[0] else None)
            builder.response(span)
        elif span.kind == "tool":
            builder.execution(span)
    top = (s.attrs for s in spans if s.kind == "agent" and s.parent is None)
    ours = root.attrs if root is not None else next(top, {})
    builder.steps += _messages_after(ours.get("agentlens.messages_after"))
    for index, step in enumerate(builder.steps):
        step.index = index
    models = [m for m in map(o.model_of, llm) if m]
    named = spans if root is None else [root, *spans]
    fallback = trace if root is None else root.span_id
    traj = Trajectory(
        id=_text(ours.get("agentlens.trajectory.id")) or fallback or path.stem,
        task_id=_text(ours.get("agentlens.task.id")),
        parent_id=_text(ours.get("agentlens.parent_id")),
        task=_text(ours.get("agentlens.task")) or task,
        agent=Agent(name=_agent_name(named), version=_agent_version(named)),
        model=models[0] if models else None,
        outcome=_outcome(ours),
        source=Source(format=OtelReader.name, path=str(path)),
        steps=builder.steps,
        reported_usage=_reported_usage(ours),
        reported_cost=_dollars(ours.get("agentlens.reported_cost_usd")),
        metadata=_metadata(ours) if ours.get("agentlens.trajectory.id") else {"spans": dict(kinds)},
    )
    return traj, builder.called


def _asked(span: o.Span, task: str | None) -> list[Step]:
    """The system and user messages a response was asked with, in their order. The first
    response's first user message is the task (`task`): a step, unless `convert --to otel`
    wrote it for a run that had the task but no user step (`agentlens.task_is_no_step`)."""
    told = _said(span, "system", o.system_texts(span))
    if task is None:
        return _in_order(told, _said(span, "user", o.new_user_texts(span)), span)
    opening = [] if span.attrs.get("agentlens.task_is_no_step") is True else [task]
    said = _said(span, "user", opening) + _said(span, "user", o.new_user_texts(span)[1:], 1)
    return _in_order(told, said, span)


def _in_order(told: list[Step], said: list[Step], span: o.Span) -> list[Step]:
    """System messages, then user ones; or in the order `convert --to otel` wrote for them
    (`agentlens.messages.order`, `s` a system and `u` a user message), when it fits."""
    order = span.attrs.get("agentlens.messages.order")
    if not isinstance(order, str) or Counter(order) != Counter(s=len(told), u=len(said)):
        return told + said
    queues = {"s": iter(told), "u": iter(said)}
    return [next(queues[kind]) for kind in order]


def _messages_after(raw: Any) -> list[Step]:
    """The user and system messages after the last response, as `convert --to otel` wrote them
    on the root span; an item of another shape is passed over."""
    steps = []
    for item in _loads_list(raw):
        if not isinstance(item, dict) or item.get("role") not in ("user", "system"):
            continue
        text = item.get("content")
        stamp = parse_time(item.get("timestamp"))
        steps.append(
            Step(index=0, kind=item["role"], text=text if isinstance(text, str) else "",
                 timestamp=stamp, subtrajectory=_text(item.get("subtrajectory")))
        )  # fmt: skip
    return steps


def _said(span: o.Span, kind: StepKind, texts: list[str], skip: int = 0) -> list[Step]:
    """Messages a response was asked with, at their own times where `convert --to otel` wrote
    them (`agentlens.<kind>.timestamps`, one per message), else at the span's start."""
    own = _loads_list(span.attrs.get(f"agentlens.{kind}.timestamps"))
    if len(own) < skip + len(texts):
        steps = [Step(index=0, kind=kind, text=text, timestamp=_time(span)) for text in texts]
    else:
        steps = [
            Step(index=0, kind=kind, text=text, timestamp=parse_time(stamp))
            for text, stamp in zip(texts, own[skip : skip + len(texts)], strict=True)
        ]
    links = _loads_list(span.attrs.get(f"agentlens.{kind}.subtrajectories"))
    if len(links) >= skip + len(texts):  # the sub-agents they link to, one per message
        for step, link in zip(steps, links[skip:], strict=False):
            step.subtrajectory = _text(link)
    return steps


def _metadata(attrs: dict[str, Any]) -> dict[str, Any]:
    """The trajectory's own metadata, as `convert --to otel` wrote it ({} when it had none)."""
    found = o.loads(attrs.get("agentlens.metadata"))
    return found if isinstance(found, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _dollars(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok and math.isfinite(value) and value >= 0 else None


def _outcome(attrs: dict[str, Any]) -> Outcome:
    """The verdict `convert --to otel` wrote on the root span (`agentlens.outcome`)."""
    status = attrs.get("agentlens.outcome")
    if status not in ("passed", "failed"):
        return Outcome()
    source, detail = attrs.get("agentlens.outcome.source"), attrs.get("agentlens.outcome.detail")
    return Outcome(status=status, source=_text(source), detail=_text(detail))


def _reported_usage(attrs: dict[str, Any]) -> Usage | None:
    key = "agentlens.reported_usage."
    found = [
        attrs.get(key + k) for k in ("input_tokens", "output_tokens", "cache_read.input_tokens")
    ]
    counts = [c for c in found if isinstance(c, int) and not isinstance(c, bool) and c >= 0]
    if len(counts) != 3:
        return None
    return Usage(prompt_tokens=counts[0], completion_tokens=counts[1], cached_tokens=counts[2])


def _agent_name(spans: list[o.Span]) -> str | None:
    for span in spans:
        if span.kind == "agent":
            name = span.attrs.get("gen_ai.agent.name") or span.attrs.get("agent.name")
            if name:
                return str(name)
    service = spans[0].resource.get("service.name") if spans else None
    return str(service) if service else None


def _agent_version(spans: list[o.Span]) -> str | None:
    found = (s.attrs.get("gen_ai.agent.version") for s in spans if s.kind == "agent")
    return next((str(v) for v in found if v), None)


def _own_time(span: o.Span) -> datetime | None:
    """The step's own time, as `convert --to otel` wrote it (`agentlens.step.timestamp`)."""
    return parse_time(span.attrs.get("agentlens.step.timestamp"))


def _time(span: o.Span, *, answered: bool = False) -> datetime | None:
    """When the span started; for a response, when it ended (the answer came), if it says; not
    a time `convert --to otel` made up for a step that had none (`agentlens.*_synthetic`)."""
    use_end = answered and span.end >= span.start
    if span.attrs.get("agentlens.end_synthetic" if use_end else "agentlens.start_synthetic"):
        return None
    at = span.end if use_end else span.start
    return datetime.fromtimestamp(at / 1e9, UTC) if at > 0 else None
