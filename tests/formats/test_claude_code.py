from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentlens.formats import detect, read_path
from tests.conftest import FORMATS

ROOT = FORMATS / "claude-code"
FILES = sorted(ROOT.rglob("*.jsonl"))
SESSION = ROOT / "marot-spotter" / "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"


def _lines(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _objects(path: Path, kind: str) -> list[dict[str, Any]]:
    return [o for o in _lines(path) if isinstance(o, dict) and o.get("type") == kind]


def _blocks(line: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    content = line["message"].get("content") if isinstance(line.get("message"), dict) else None
    return [b for b in content or [] if isinstance(b, dict) and b.get("type") == kind]


def _first_session_line(path: Path) -> dict[str, Any]:
    return next(o for o in _lines(path) if isinstance(o, dict) and "sessionId" in o)


def test_all_files_are_found() -> None:
    assert len(FILES) == 12


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_counts_match_the_raw_lines(path: Path) -> None:
    assert detect(path, path.read_bytes()[:65536]).name == "claude-code"
    (traj,) = read_path(path)
    assistants = _objects(path, "assistant")
    uses = [b for line in assistants for b in _blocks(line, "tool_use")]
    assert [s.call_id for s in traj.tool_steps] == [b["id"] for b in uses]
    # one usage per message id, however many lines the message was split over
    usage = {line["message"]["id"]: line["message"]["usage"] for line in assistants}
    total = traj.usage_total()
    assert total.completion_tokens == sum(u["output_tokens"] for u in usage.values())
    assert total.cached_tokens == sum(u.get("cache_read_input_tokens", 0) for u in usage.values())
    prompt = sum(
        u["input_tokens"]
        + u.get("cache_read_input_tokens", 0)
        + u.get("cache_creation_input_tokens", 0)
        for u in usage.values()
    )
    assert total.prompt_tokens == prompt
    assert len({s.turn for s in traj.steps if s.turn is not None}) == len(usage)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_results_fill_observation_and_error(path: Path) -> None:
    (traj,) = read_path(path)
    by_id = {s.call_id: s for s in traj.tool_steps}
    results = [b for line in _objects(path, "user") for b in _blocks(line, "tool_result")]
    for block in results:
        step = by_id[block["tool_use_id"]]
        content = block.get("content")
        if isinstance(content, str):
            assert step.observation == content
        assert step.is_error == bool(block.get("is_error"))
    answered = {b["tool_use_id"] for b in results}
    assert all(s.observation is None for s in traj.tool_steps if s.call_id not in answered)


def test_split_message_counts_usage_once() -> None:
    assistants = _objects(SESSION, "assistant")
    ids = [line["message"]["id"] for line in assistants]
    assert len(ids) > len(set(ids))  # the pitfall is present in this file
    (traj,) = read_path(SESSION)
    with_usage = [s for s in traj.steps if s.usage is not None]
    assert len(with_usage) == len(set(ids))


def test_non_object_lines_are_skipped_with_a_warning() -> None:
    path = ROOT / "daaain-claude-code-log" / "edge_cases.jsonl"
    lines = _lines(path)
    numbers = [i for i, line in enumerate(lines, start=1) if not isinstance(line, dict)]
    assert len(numbers) == 3
    (traj,) = read_path(path)
    warnings = traj.metadata["warnings"]
    assert [w.split(":")[0] for w in warnings] == [f"line {n}" for n in numbers]
    from agentlens.formats import read_paths

    found = read_paths([path]).warnings  # the SDK's batch view names the file on each line
    assert sorted(found) == sorted(f"{path}: {w}" for w in warnings)
    assert set(found.values()) == {1}


def test_sub_agents_are_linked_from_the_task_call() -> None:
    (traj,) = read_path(SESSION)
    sub_files = sorted((SESSION.parent / SESSION.stem / "subagents").glob("agent-*.jsonl"))
    agent_ids = [_lines(f)[0]["agentId"] for f in sub_files]
    session_id = _first_session_line(SESSION)["sessionId"]
    assert [s.id for s in traj.subtrajectories] == [f"{session_id}/{a}" for a in agent_ids]
    assert all(s.parent_id == traj.id for s in traj.subtrajectories)
    spawned = {
        line["message"]["content"][0]["tool_use_id"]: line["toolUseResult"]["agentId"]
        for line in _objects(SESSION, "user")
        if isinstance(line.get("toolUseResult"), dict) and "agentId" in line["toolUseResult"]
    }
    links = {s.call_id: s.subtrajectory for s in traj.tool_steps if s.subtrajectory}
    assert links == {call: f"{session_id}/{agent}" for call, agent in spawned.items()}
    assert all(s.tool_name == "Task" for s in traj.tool_steps if s.subtrajectory)
    (standalone,) = read_path(sub_files[0])
    assert (standalone.id, standalone.parent_id) == (traj.subtrajectories[0].id, traj.id)
    sub_tools = sum(len(_blocks(line, "tool_use")) for line in _objects(sub_files[0], "assistant"))
    assert len(traj.subtrajectories[0].tool_steps) == sub_tools


def test_shell_and_file_tools_are_categorised() -> None:
    (traj,) = read_path(SESSION)
    for step in traj.tool_steps:
        if step.tool_name == "Bash":
            assert step.command == step.arguments["command"]
        if step.tool_name in ("Read", "Edit", "Write"):
            assert step.files == [step.arguments["file_path"]]
    categories = {s.tool_name: s.category for s in traj.tool_steps}
    assert categories.get("Read") == "read_file"
    assert categories.get("Edit") == "edit"
    assert traj.agent.name == "claude-code"
    assert traj.agent.version == _first_session_line(SESSION)["version"]


def test_a_truncated_session_names_the_cut_line(tmp_path: Path) -> None:
    """Cut in the middle of a line, as a session still being written is: the lines before it
    are read, and the cut one is named (tests/formats/test_unfinished.py has the rest)."""
    data = SESSION.read_bytes()
    lines = data.count(b"\n", 0, len(data) // 2)
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(data[: len(data) // 2])
    (traj,) = read_path(cut)
    assert traj.metadata["truncated"]["line"] == lines + 1
    assert traj.tool_steps


def test_a_pasted_image_keeps_its_user_turn(tmp_path: Path) -> None:
    """A screenshot pasted into the prompt is an `image` block of a user line: it is named, as
    in a tool result, and a prompt that is only an image still makes a user step."""
    path = ROOT / "jnarowski-agentcmd" / "full-session-two.jsonl"
    lines = _lines(path)
    image = next(
        part
        for line in lines
        for block in _blocks(line, "tool_result")
        for part in block["content"]
        if isinstance(block["content"], list) and part.get("type") == "image"
    )
    first = next(
        i for i, line in enumerate(lines) if _blocks(line, "text") and line["type"] == "user"
    )
    prompt = lines[first]
    only_image = {**prompt, "uuid": "pasted-image", "message": {"role": "user", "content": [image]}}
    prompt["message"]["content"] = [image, *prompt["message"]["content"]]
    lines.insert(first + 1, only_image)
    copy = tmp_path / path.name
    copy.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (original,) = read_path(path)
    (read,) = read_path(copy)
    users = [(s.raw["uuid"], s.text) for s in read.steps if s.kind == "user"]
    before = [(s.raw["uuid"], s.text) for s in original.steps if s.kind == "user"]
    at = next(i for i, (uuid, _) in enumerate(before) if uuid == prompt["uuid"])
    pasted = [(prompt["uuid"], f"[image]\n{before[at][1]}"), ("pasted-image", "[image]")]
    assert users == [*before[:at], *pasted, *before[at + 1 :]]
