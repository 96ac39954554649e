"""GitHub Copilot CLI events.jsonl: counts checked against the raw events."""

from __future__ import annotations

import json
from typing import Any

from agentlens.formats import detect, read_path
from tests.conftest import FORMATS

EVENTS = FORMATS / "copilot-cli" / "events.jsonl"
CROSS_CHECK = FORMATS / "copilot-cli" / "vibecodingtracker.expected.json"


def _events(kind: str | None = None) -> list[dict[str, Any]]:
    events = [json.loads(line) for line in EVENTS.read_text().splitlines() if line.strip()]
    return [e for e in events if kind is None or e["type"] == kind]


def test_counts_match_the_raw_events() -> None:
    (traj,) = read_path(EVENTS)
    assert detect(EVENTS, EVENTS.read_bytes()[:65536]).name == "copilot-cli"
    assert traj.id == _events("session.start")[0]["data"]["sessionId"]
    requested = [
        r["toolCallId"] for e in _events("assistant.message") for r in e["data"]["toolRequests"]
    ]
    started = [e["data"]["toolCallId"] for e in _events("tool.execution_start")]
    every_call = requested + [c for c in started if c not in requested]
    assert sorted(s.call_id or "" for s in traj.tool_steps) == sorted(every_call)
    assert len(traj.tool_steps) == len(_events("tool.execution_complete"))
    failed = {
        e["data"]["toolCallId"]
        for e in _events("tool.execution_complete")
        if not e["data"]["success"]
    }
    assert {s.call_id for s in traj.tool_steps if s.is_error} == failed
    plain = [e for e in _events("assistant.message") if not e["data"]["toolRequests"]]
    assert sum(s.kind == "agent" for s in traj.steps) == len(plain)
    assert sum(s.kind == "user" for s in traj.steps) == len(_events("user.message"))
    (shutdown,) = _events("session.shutdown")
    metrics = shutdown["data"]["modelMetrics"].values()
    usage = traj.usage_known()
    assert usage is not None
    assert usage.prompt_tokens == sum(m["usage"]["inputTokens"] for m in metrics)
    assert usage.cached_tokens == sum(m["usage"]["cacheReadTokens"] for m in metrics)
    per_message = sum(e["data"]["outputTokens"] for e in _events("assistant.message"))
    assert (
        usage.completion_tokens == per_message == sum(m["usage"]["outputTokens"] for m in metrics)
    )
    assert traj.model == _events("session.model_change")[-1]["data"]["newModel"]


def test_observations_and_categories() -> None:
    (traj,) = read_path(EVENTS)
    results = {
        e["data"]["toolCallId"]: e["data"]["result"]["content"]
        for e in _events("tool.execution_complete")
    }
    assert all(s.observation == results[s.call_id or ""] for s in traj.tool_steps)
    shell = [s for s in traj.tool_steps if s.tool_name == "bash"]
    assert [s.command for s in shell] == [s.arguments["command"] for s in shell]
    assert {str(s.category) for s in shell} == {"list_dir", "search"}
    by_name = {(s.tool_name, str(s.category)) for s in traj.tool_steps}
    assert {("view", "read_file"), ("web_search", "search"), ("task_complete", "finish")} <= by_name
    for step in (s for s in traj.tool_steps if s.tool_name == "view"):
        listed = not results[step.call_id or ""].startswith("1. ")  # a file's view is numbered
        assert str(step.category) == ("list_dir" if listed else "read_file"), step.arguments


def test_cross_check_with_vibecodingtracker() -> None:
    """That project's output count leaves out the reasoning tokens, which Copilot's own
    `outputTokens` include; on those terms the figures agree."""
    (record,) = json.loads(CROSS_CHECK.read_text())["records"]
    (figures,) = record["conversationUsage"].values()
    usage = read_path(EVENTS)[0].usage_known()
    assert usage is not None
    assert usage.prompt_tokens == figures["input_tokens"]
    assert usage.cached_tokens == figures["cache_read_input_tokens"]
    assert usage.completion_tokens == figures["output_tokens"] + figures["reasoning_output_tokens"]
    assert record["toolCallCounts"]["Bash"] == 2
