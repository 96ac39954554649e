"""`claude -p --output-format stream-json --verbose` output. No such stream is in the shared data,
so each test rebuilds one at test time from a real session file: its message lines in the
stream's shape (`session_id`, no tree fields or timestamps), between an `init` and a `result`
line, with the sub-agent's own file inlined under `parent_tool_use_id`, as the CLI prints it.
The stream must then read as the session does, step for step."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentlens.errors import AgentLensError
from agentlens.formats import detect, read_path
from agentlens.trajectory import Step, Trajectory
from tests.formats.test_claude_code import SESSION, _lines

SUB = SESSION.parent / SESSION.stem / "subagents" / "agent-a2898e3.jsonl"
COST = 0.4321
RESULT_USAGE = {"input_tokens": 11, "output_tokens": 222, "cache_read_input_tokens": 3333}


KEPT = ("type", "subtype", "message", "content", "isMeta", "isCompactSummary", "uuid")


def stream_line(line: dict[str, Any], session: str, parent: str | None) -> dict[str, Any]:
    """The line as the stream prints it: its own fields, none of the session tree's."""
    kept = {key: line[key] for key in KEPT if key in line}
    return {**kept, "parent_tool_use_id": parent, "session_id": session}


def messages(path: Path) -> list[dict[str, Any]]:
    """User and assistant lines, and system lines that say something (a compaction)."""
    return [
        o for o in _lines(path) if isinstance(o, dict)
        and (o.get("type") in ("user", "assistant") or isinstance(o.get("content"), str))
    ]  # fmt: skip


def spawning_call(sub: Path) -> str:
    """The `Task` call whose result names the sub-agent file's agent id."""
    agent = _lines(sub)[0]["agentId"]
    for line in messages(SESSION):
        result = line.get("toolUseResult")
        if isinstance(result, dict) and result.get("agentId") == agent:
            return str(line["message"]["content"][0]["tool_use_id"])
    raise AssertionError("no Task call spawned the sub-agent")


def write_stream(path: Path, *, inline_sub: bool = True) -> dict[str, Any]:
    lines = messages(SESSION)
    session = lines[0]["sessionId"]
    call = spawning_call(SUB)
    init = {"type": "system", "subtype": "init", "cwd": "/repo", "session_id": session,
            "tools": ["Task", "Bash"], "model": "claude-test-model",
            "claude_code_version": "2.1.38", "permissionMode": "default"}  # fmt: skip
    out = [init]
    for line in lines:
        answers_call = line["type"] == "user" and any(
            isinstance(b, dict) and b.get("tool_use_id") == call
            for b in (line.get("message") or {}).get("content") or []
        )
        if answers_call and inline_sub:  # the CLI prints the sub-agent's lines before the result
            out += [stream_line(sub, session, call) for sub in messages(SUB)]
        out.append(stream_line(line, session, None))
    result = {"type": "result", "subtype": "success", "is_error": False, "num_turns": 7,
              "duration_ms": 1234, "result": "done", "session_id": session,
              "total_cost_usd": COST, "usage": RESULT_USAGE}  # fmt: skip
    out.append(result)
    path.write_text("".join(json.dumps(o) + "\n" for o in out))
    return {"session": session, "call": call}


def same_steps(ours: list[Step], theirs: list[Step]) -> None:
    fields = ("kind", "tool_name", "category", "call_id", "command", "files", "observation",
              "is_error", "usage", "text", "turn", "model")  # fmt: skip
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert {f: getattr(a, f) for f in fields} == {f: getattr(b, f) for f in fields}


@pytest.fixture
def stream(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    path = tmp_path / "stdout.jsonl"
    return path, write_stream(path)


def read_one(path: Path) -> Trajectory:
    (traj,) = read_path(path)
    return traj


def test_a_stream_is_detected_as_claude_code(stream: tuple[Path, dict[str, Any]]) -> None:
    path, _ = stream
    assert detect(path, path.read_bytes()[:65536]).name == "claude-code"


def test_a_stream_reads_as_its_session_does(stream: tuple[Path, dict[str, Any]]) -> None:
    path, ids = stream
    traj, session = read_one(path), read_one(SESSION)
    same_steps(traj.steps, session.steps)
    assert traj.id == ids["session"] and traj.task == session.task
    assert traj.agent.version == "2.1.38" and traj.model == session.model
    assert all(s.timestamp is None for s in traj.steps)  # the stream has none


def test_the_result_line_gives_cost_usage_and_ending(stream: tuple[Path, dict[str, Any]]) -> None:
    traj = read_one(stream[0])
    assert traj.reported_cost == COST and traj.cost_total() == COST
    assert traj.reported_usage is not None
    assert traj.reported_usage.prompt_tokens == 11 + 3333
    assert traj.reported_usage.completion_tokens == 222
    assert traj.metadata["result"] == {"subtype": "success", "is_error": False, "num_turns": 7,
                                       "duration_ms": 1234, "result": "done"}  # fmt: skip
    assert traj.metadata["output_format"] == "stream-json"


def test_an_inline_sub_agent_becomes_a_linked_subtrajectory(
    stream: tuple[Path, dict[str, Any]],
) -> None:
    path, ids = stream
    traj, session = read_one(path), read_one(SESSION)
    (sub,) = traj.subtrajectories
    assert sub.id == f"{ids['session']}/{ids['call']}" and sub.parent_id == traj.id
    (task,) = [s for s in traj.steps if s.subtrajectory]
    assert task.call_id == ids["call"] and task.subtrajectory == sub.id and task.tool_name == "Task"
    from_file = next(s for s in session.subtrajectories if s.id.endswith("/a2898e3"))
    same_steps(sub.steps, from_file.steps)


def test_a_stream_without_its_result_line_still_reads(tmp_path: Path) -> None:
    """A run cut short (timeout, Ctrl-C): no result line, so no reported cost."""
    path = tmp_path / "cut.jsonl"
    write_stream(path, inline_sub=False)
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:-1]))
    traj = read_one(path)
    assert traj.reported_cost is None and "result" not in traj.metadata
    assert len(traj.steps) == len(read_one(SESSION).steps)


def test_a_wrong_typed_parent_id_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    write_stream(path, inline_sub=False)
    lines = path.read_text().splitlines()
    doc = json.loads(lines[3])
    doc["parent_tool_use_id"] = 17
    lines[3] = json.dumps(doc)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(AgentLensError, match=r"line 4: parent_tool_use_id should be a string"):
        read_path(path)
