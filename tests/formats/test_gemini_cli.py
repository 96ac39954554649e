from __future__ import annotations

import json

from agentlens.formats import detect, read_path
from tests.conftest import FORMATS

SESSION = FORMATS / "gemini-cli" / "session-2025-10-27T19-55-981c87cb.json"
RFC_EXAMPLE = (
    FORMATS / "atif-harbor-golden/docs/rfcs/0001-trajectory-format/gemini-cli-trajectory.json"
)


def test_session_steps_tokens_and_observations_match_the_raw_file() -> None:
    raw = json.loads(SESSION.read_bytes())
    (traj,) = read_path(SESSION)
    assert detect(SESSION, SESSION.read_bytes()).name == "gemini-cli"
    calls = [c for m in raw["messages"] for c in m.get("toolCalls") or []]
    assert [s.tool_name for s in traj.tool_steps] == [c["name"] for c in calls]
    assert traj.id == raw["sessionId"]
    tokens = [m["tokens"] for m in raw["messages"] if "tokens" in m]
    usage = traj.usage_total()
    assert usage.prompt_tokens == sum(t["input"] for t in tokens)
    assert usage.completion_tokens == sum(t["output"] + t["thoughts"] for t in tokens)
    assert usage.cached_tokens == sum(t["cached"] for t in tokens)
    failed = [c["id"] for c in calls if c["status"] != "success"]
    assert [s.call_id for s in traj.tool_steps if s.is_error] == failed
    first = calls[0]["result"][0]["functionResponse"]["response"]["output"]
    assert traj.tool_steps[0].observation == first
    assert traj.model == raw["messages"][1]["model"]


def test_categories_and_commands() -> None:
    (traj,) = read_path(SESSION)
    by_tool = {(s.tool_name, str(s.category)) for s in traj.tool_steps}
    assert ("write_file", "create_file") in by_tool
    assert ("read_file", "read_file") in by_tool
    assert ("list_directory", "list_dir") in by_tool
    shell = [s for s in traj.tool_steps if s.tool_name == "run_shell_command"]
    assert all(s.command for s in shell)
    assert "pip install RestrictedPython" in [s.command for s in shell]


def test_rfc_example_without_tool_calls() -> None:
    raw = json.loads(RFC_EXAMPLE.read_bytes())
    (traj,) = read_path(RFC_EXAMPLE)
    assert traj.source.format == "gemini-cli"
    assert [s.kind for s in traj.steps] == [
        "user" if m["type"] == "user" else "agent" for m in raw["messages"]
    ]
