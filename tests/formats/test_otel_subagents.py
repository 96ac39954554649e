"""Sub-agents in OpenTelemetry: an agent span a call started is a sub-agent, read into the run's
`subtrajectories` and linked from that call's step, whoever wrote the trace; any other nesting of
agent spans is one agent; hostile parent ids cost nothing."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentlens.formats import read_path
from agentlens.formats._otel_agents import MAX_DEPTH, partition
from agentlens.formats._otel_spans import Span
from agentlens.formats.otel_writer import to_otlp
from tests.conftest import FORMATS

CLAUDE = FORMATS / "claude-code" / "marot-spotter" / "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"


def _export(tmp_path: Path, edit: Any = None) -> Path:
    """The real Claude Code run with a `Task` sub-agent, as `convert --to otel` writes it, then
    made over by `edit` (a function of the span list)."""
    (run,) = read_path(CLAUDE)
    document = to_otlp([run])
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    if edit is not None:
        spans[:] = edit(spans)
    out = tmp_path / "run.otlp.json"
    out.write_text(json.dumps(document))
    return out


def _foreign(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """As another tool would capture it: nothing under `agentlens.*`."""
    for span in spans:
        span["attributes"] = [
            a for a in span["attributes"] if not a["key"].startswith("agentlens.")
        ]
    return spans


def _attr(span: dict[str, Any], key: str) -> Any:
    found = [a["value"] for a in span["attributes"] if a["key"] == key]
    return next(iter(found[0].values())) if found else None


def test_a_foreign_capture_reads_a_sub_agent_from_the_call_that_started_it(
    tmp_path: Path,
) -> None:
    (original,) = read_path(CLAUDE)
    (back,) = read_path(_export(tmp_path, _foreign))
    linked, unlinked = original.subtrajectories  # a `Task` agent, and a compaction no call made
    (sub,) = back.subtrajectories  # the compaction's spans hang under the run's: its own steps
    assert sub.parent_id == back.id
    assert [s.text for s in sub.steps if s.kind == "agent"] == [
        s.text for s in linked.steps if s.kind == "agent"
    ]
    assert [s.command for s in sub.tool_steps] == [s.command for s in linked.tool_steps]
    (call,) = [s for s in back.steps if s.subtrajectory is not None]
    assert call.tool_name == "Task" and call.subtrajectory == sub.id
    assert len(back.tool_steps) == len(original.tool_steps) + len(unlinked.tool_steps)


def test_an_agent_span_nested_in_an_agent_span_is_the_same_agent(tmp_path: Path) -> None:
    """A framework's chain inside its agent (OpenInference marks both AGENT): one trajectory."""
    (original,) = read_path(CLAUDE)

    def under_the_root(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
        root = spans[0]["spanId"]
        for span in spans:
            if _attr(span, "agentlens.subagent"):
                span["parentSpanId"] = root
        return _foreign(spans)

    (back,) = read_path(_export(tmp_path, under_the_root))
    assert back.subtrajectories == []
    subs = sum(len(s.tool_steps) for s in original.subtrajectories)
    assert len(back.tool_steps) == len(original.tool_steps) + subs


def _chain(depth: int, *, loop: bool = False) -> dict[str, Any]:
    """`depth` agents, each started by a call of the one before; with `loop`, the first agent's
    parent is the last call, so parent ids go round."""
    spans = []
    for level in range(depth):
        agent, chat, call = f"a{level:015d}", f"c{level:015d}", f"t{level:015d}"
        parent = f"t{level - 1:015d}" if level else (f"t{depth - 1:015d}" if loop else None)
        start = str(1_000_000_000 * (level + 1))
        asked = [{"type": "tool_call", "id": call, "name": "delegate", "arguments": {}}]
        output = json.dumps([{"role": "assistant", "parts": asked}])
        ran = {"gen_ai.tool.name": "delegate", "gen_ai.tool.call.id": call}
        spans += [
            _span(agent, parent, {"gen_ai.operation.name": "invoke_agent"}, start),
            _span(
                chat,
                agent,
                {"gen_ai.operation.name": "chat", "gen_ai.output.messages": output},
                start,
            ),
            _span(call, agent, {"gen_ai.operation.name": "execute_tool", **ran}, start),
        ]
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": spans}]}]}


def _span(span_id: str, parent: str | None, attrs: dict[str, Any], start: str) -> dict[str, Any]:
    span = {
        "traceId": "0" * 32, "spanId": span_id, "name": span_id, "startTimeUnixNano": start,
        "endTimeUnixNano": start,
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()],
    }  # fmt: skip
    if parent is not None:
        span["parentSpanId"] = parent
    return span


def _levels(traj: Any) -> list[int]:
    found = [len(traj.tool_steps)]
    while traj.subtrajectories:
        (traj,) = traj.subtrajectories
        found.append(len(traj.tool_steps))
    return found


def test_sub_agents_nested_deeper_than_the_limit_are_read_into_the_deepest(tmp_path: Path) -> None:
    out = tmp_path / "deep.otlp.json"
    out.write_text(json.dumps(_chain(40)))
    (run,) = read_path(out)
    assert _levels(run) == [1] * MAX_DEPTH + [40 - MAX_DEPTH]


@pytest.mark.parametrize("agents", [1, 5])
def test_a_loop_of_parent_ids_loses_no_step(tmp_path: Path, agents: int) -> None:
    """Agents in a loop of parent ids are the run's own; one agent started by its own call was
    read as a sub-agent of an empty run (found by review)."""
    out = tmp_path / "loop.otlp.json"
    out.write_text(json.dumps(_chain(agents, loop=True)))
    (run,) = read_path(out)
    assert _levels(run) == [agents]


def _agent_chain(size: int) -> list[Span]:
    """Agents each started by a call of the one before, `size` spans, deepest first."""
    spans, parent = [], None
    for level in range(size // 2):
        agent, call = f"a{level}", f"t{level}"
        spans += [
            Span("t", agent, parent, agent, level, {"gen_ai.operation.name": "invoke_agent"}, None),
            Span("t", call, agent, call, level, {"gen_ai.operation.name": "execute_tool"}, None),
        ]
        parent = call
    return spans[::-1]


def _agents_under_other_spans(size: int) -> list[Span]:
    """Half the spans a chain of spans of no known kind (HTTP, DB), the other half agent spans
    under its deepest."""
    spans = [Span("t", "o0", None, "o0", 0, {}, None)]
    spans += [Span("t", f"o{i}", f"o{i - 1}", "o", i, {}, None) for i in range(1, size // 2)]
    agent = {"gen_ai.operation.name": "invoke_agent"}
    spans += [
        Span("t", f"a{i}", f"o{size // 2 - 1}", "a", i, agent, None) for i in range(size // 2)
    ]
    return spans


@pytest.mark.parametrize("shape", [_agent_chain, _agents_under_other_spans])
def test_partition_takes_linear_time(shape: Callable[[int], list[Span]]) -> None:
    """Found by review: each root's depth was found by a walk up a list of the roots above it,
    and each agent span walked the spans of no kind above it afresh; 100k spans took 55 s in a
    chain of agents and more than 5 minutes under a chain of HTTP spans."""

    def seconds(spans: list[Span]) -> float:
        runs = []
        for _ in range(3):
            start = time.process_time()
            partition(spans)
            runs.append(time.process_time() - start)
        return min(runs)

    ratio = seconds(shape(16_000)) / seconds(shape(4_000))
    assert ratio < 8, f"4x the spans took {ratio:.1f}x the time (linear: 4, quadratic: 16)"


def _agents_steps(traj: Any) -> list[list[tuple[Any, ...]]]:
    """Each agent's steps (the run's, then each sub-agent's), as what they did."""
    found = [[(s.kind, s.tool_name, s.text, s.subtrajectory) for s in traj.steps]]
    for sub in traj.subtrajectories:
        found += _agents_steps(sub)
    return found


def _leaves(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The spans no span names as its parent: responses and calls that started no sub-agent."""
    parents = {span.get("parentSpanId") for span in spans}
    return [span for span in spans if span["spanId"] not in parents]


def _warnings(traj: Any) -> list[str]:
    return list(traj.metadata.get("warnings", []))


def test_a_span_id_two_leaf_spans_share_keeps_each_with_its_own_agent(tmp_path: Path) -> None:
    """Found by the brief: a span was placed by the parent of the first span with its id, so a
    sub-agent's call sharing an id with one of the run's was read as the run's."""
    (original,) = read_path(_export(tmp_path))

    def shared_by_the_run_and_the_sub_agent(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
        tools = [s for s in _leaves(spans) if _attr(s, "gen_ai.operation.name") == "execute_tool"]
        tools[-1]["spanId"] = tools[0]["spanId"]  # the run's first call, a sub-agent's last
        return spans

    (back,) = read_path(_export(tmp_path, shared_by_the_run_and_the_sub_agent))
    assert _agents_steps(back) == _agents_steps(original)
    assert _warnings(back) == _warnings(original)  # no span names it as parent: nothing lost


def test_spans_without_ids_keep_their_own_agents_and_link_no_call(tmp_path: Path) -> None:
    """Found by the brief: every span with an empty id was placed by the first such span's
    parent (all read into the run), and a sub-agent no call started (a compaction) was linked
    to the step of the last call with an empty id."""
    (original,) = read_path(_export(tmp_path))

    def no_ids_on_leaves(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for span in _leaves(spans):
            span["spanId"] = ""
        return spans

    (back,) = read_path(_export(tmp_path, no_ids_on_leaves))
    assert _agents_steps(back) == _agents_steps(original)
    assert [s.subtrajectory for s in back.steps if s.subtrajectory] == [
        s.subtrajectory for s in original.steps if s.subtrajectory
    ]


def test_spans_under_a_shared_span_id_are_the_runs_own_with_a_warning(tmp_path: Path) -> None:
    """The `Task` call's id given to one of the run's earlier calls too: which span the
    sub-agent hangs under is unknown, so it is read as started by none (its steps the run's
    own, none lost), and a warning names the id."""
    (original,) = read_path(CLAUDE)
    task = ""

    def task_id_shared(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
        nonlocal task
        calls = [s for s in spans if _attr(s, "gen_ai.operation.name") == "execute_tool"]
        (started,) = [s for s in calls if _attr(s, "gen_ai.tool.name") == "Task"]
        task = calls[0]["spanId"] = started["spanId"]
        return _foreign(spans)

    (back,) = read_path(_export(tmp_path, task_id_shared))
    assert back.subtrajectories == [] and not any(s.subtrajectory for s in back.steps)
    subs = sum(len(s.tool_steps) for s in original.subtrajectories)
    assert len(back.tool_steps) == len(original.tool_steps) + subs
    assert _warnings(back) == [
        f"span id {task} is shared by several spans: the spans under it are the run's own"
    ]


def _call_ids_changed(spans: list[dict[str, Any]]) -> None:
    for span in _tool_spans(spans):
        _call_id(span)["value"] = {"stringValue": "other-" + _attr(span, "gen_ai.tool.call.id")}


def _call_ids_removed(spans: list[dict[str, Any]]) -> None:
    for span in _tool_spans(spans):
        span["attributes"].remove(_call_id(span))


def _call_ids_shuffled(spans: list[dict[str, Any]]) -> None:
    """Each two tool spans of one tool under one parent trade call ids."""
    alike: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for span in _tool_spans(spans):
        alike.setdefault((span.get("parentSpanId"), _attr(span, "gen_ai.tool.name")), []).append(
            _call_id(span)
        )
    for ids in alike.values():
        for one, other in zip(ids[0::2], ids[1::2], strict=False):
            one["value"], other["value"] = other["value"], one["value"]


def _tool_spans(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [s for s in spans if _attr(s, "gen_ai.operation.name") == "execute_tool"]


def _call_id(span: dict[str, Any]) -> dict[str, Any]:
    (found,) = [a for a in span["attributes"] if a["key"] == "gen_ai.tool.call.id"]
    return found


@pytest.mark.parametrize("edit", [_call_ids_changed, _call_ids_removed, _call_ids_shuffled])
def test_a_tool_span_whose_call_id_matches_no_call_claims_its_tools_oldest_call(
    edit: Callable[[list[dict[str, Any]]], None], tmp_path: Path
) -> None:
    """Another exporter's tool spans may name call ids the messages do not (or none): each span
    still claims one call, the oldest open call of its tool, so no step is read twice (the run's
    157 steps used to read as 307, its sub-agents' 40 as 73)."""
    (original,) = read_path(CLAUDE)

    def edited(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
        edit(spans)
        return spans

    (back,) = read_path(_export(tmp_path, edited))
    assert _agents_steps(back) == _agents_steps(original)
    assert (len(back.steps), sum(len(s.steps) for s in back.subtrajectories)) == (157, 40)
    observed = [s.observation for s in back.tool_steps]
    if edit is _call_ids_shuffled:  # the ids say which span is which call's: trust them
        assert sorted(map(str, observed)) == sorted(str(s.observation) for s in original.tool_steps)
    else:
        assert observed == [s.observation for s in original.tool_steps]
