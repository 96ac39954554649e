from __future__ import annotations

import json

import pytest

from agentlens.formats import detect, read_path
from tests.conftest import FORMATS

FIXTURES = FORMATS / "openai-messages" / "openhands-sdk-llm-fixtures"
GOLDEN = FORMATS / "atif-harbor-golden" / "tests" / "golden"
PLAIN = ["fncall-llm-message.json", "nonfncall-llm-message.json"]


@pytest.mark.parametrize("name", PLAIN)
def test_plain_list_pairs_each_call_with_its_tool_message(name: str) -> None:
    path = FIXTURES / name
    raw = json.loads(path.read_bytes())
    (traj,) = read_path(path)
    assert detect(path, path.read_bytes()).name == "openai-messages"
    calls = [c for m in raw if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    results = {m["tool_call_id"]: m["content"] for m in raw if m["role"] == "tool"}
    assert [s.call_id for s in traj.tool_steps] == [c["id"] for c in calls]
    for step, call in zip(traj.tool_steps, calls, strict=True):
        assert step.arguments == json.loads(call["function"]["arguments"])
        assert step.observation == _text(results[call["id"]])
    assert traj.steps[0].kind == "system"


def test_litellm_log_appends_the_response_and_keeps_usage_and_cost() -> None:
    path = next(FIXTURES.glob("litellm_proxy__anthropic__*.json"))
    raw = json.loads(path.read_bytes())
    (traj,) = read_path(path)
    response = raw["response"]
    assert traj.model == response["model"]
    assert traj.reported_cost == raw["cost"]
    assert traj.usage_total().prompt_tokens == response["usage"]["prompt_tokens"]
    assert traj.usage_total().completion_tokens == response["usage"]["completion_tokens"]
    final_calls = response["choices"][0]["message"].get("tool_calls") or []
    assert final_calls
    assert traj.tool_steps[-1].call_id == final_calls[-1]["id"]


def test_harbor_traces_give_one_trajectory_per_conversation() -> None:
    paths = sorted(GOLDEN.glob("*/*.traces.json"))
    assert paths
    for path in paths:
        raw = json.loads(path.read_bytes())
        trajectories = read_path(path)
        assert [t.source.index for t in trajectories] == list(range(len(raw)))
        for traj, entry in zip(trajectories, raw, strict=True):
            assert len(traj.steps) == len(entry["conversations"])
            assert traj.task_id == entry["task"]
            assert traj.model == entry["model"]
            assert traj.agent.name == entry["agent"]


def _text(content: object) -> str:
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if "text" in p)
    return str(content)
