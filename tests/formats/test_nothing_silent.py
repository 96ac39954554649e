"""Nothing is dropped without a word: deep detection, look-alike formats, unread trace-like
files, and a warning for a trajectory read with no step."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from agentlens.errors import UnknownFormatError
from agentlens.formats import read_path, read_paths
from agentlens.formats.claude_code import ClaudeCodeReader
from agentlens.formats.registry import HEAD_BYTES
from tests.conftest import DATA, FORMATS

MINI = DATA / "mini-swe-agent-swebv" / "trajs"

QWEN = [
    {"uuid": "8f1c2d0e-1", "parentUuid": None, "sessionId": "b3a9e0c4", "timestamp": "2026-03-02T10:15:31.120Z",
     "type": "user", "cwd": "/home/dev/proj", "version": "0.11.0", "gitBranch": "main",
     "message": {"role": "user", "parts": [{"text": "Fix the failing test in utils.py"}]}},
    {"uuid": "8f1c2d0e-2", "parentUuid": "8f1c2d0e-1", "sessionId": "b3a9e0c4", "timestamp": "2026-03-02T10:15:34.002Z",
     "type": "assistant", "cwd": "/home/dev/proj", "version": "0.11.0", "model": "qwen3-coder-plus",
     "message": {"role": "model", "parts": [{"text": "Let me read it."}, {"functionCall": {
         "id": "call_1", "name": "read_file", "args": {"absolute_path": "/home/dev/proj/utils.py"}}}]},
     "usageMetadata": {"promptTokenCount": 12034, "candidatesTokenCount": 41, "totalTokenCount": 12075}},
    {"uuid": "8f1c2d0e-3", "parentUuid": "8f1c2d0e-2", "sessionId": "b3a9e0c4", "timestamp": "2026-03-02T10:15:34.310Z",
     "type": "tool_result", "cwd": "/home/dev/proj", "version": "0.11.0",
     "message": {"role": "user", "parts": [{"functionResponse": {"id": "call_1", "name": "read_file",
         "response": {"output": "def add(a, b):\n    return a - b\n"}}}]},
     "toolCallResult": {"callId": "call_1", "status": "success"}},
]  # fmt: skip
DROID_SESSION = [
    {"type": "session_start", "id": "6c1f0a7e", "title": "Fix failing test", "owner": "dev",
     "version": 2, "cwd": "/home/dev/proj"},
    {"type": "message", "id": "m1", "timestamp": "2026-03-02T10:15:31.120Z", "parentId": None,
     "message": {"role": "user", "content": [{"type": "text", "text": "Fix the failing test"}]}},
    {"type": "message", "id": "m2", "timestamp": "2026-03-02T10:15:33.870Z", "parentId": "m1",
     "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read",
         "input": {"file_path": "/home/dev/proj/utils.py"}}]}},
]  # fmt: skip
DROID_STREAM = [
    {"type": "system", "subtype": "init", "cwd": "/home/dev/proj", "session_id": "a1b2c3d4",
     "tools": ["Read", "Edit", "Execute"], "model": "claude-sonnet-4-5-20250929"},
    {"type": "message", "role": "user", "id": "u1", "text": "Fix the failing test",
     "timestamp": 1761234567890, "session_id": "a1b2c3d4"},
    {"type": "tool_call", "id": "call_1", "messageId": "a1", "toolId": "Read", "toolName": "Read",
     "parameters": {"file_path": "utils.py"}, "timestamp": 1761234569001, "session_id": "a1b2c3d4"},
    {"type": "tool_result", "id": "call_1", "messageId": "a1", "toolId": "Read", "isError": False,
     "value": "def add(a, b):\n    return a - b\n", "timestamp": 1761234569100, "session_id": "a1b2c3d4"},
    {"type": "completion", "finalText": "Fixed the sign.", "numTurns": 2, "durationMs": 8123,
     "session_id": "a1b2c3d4", "timestamp": 1761234575013},
]  # fmt: skip
OPENCODE = [
    {"type": "step_start", "timestamp": 1787482258116, "sessionID": "ses_fd1c15233ffe",
     "part": {"messageID": "msg_02e3eaf25001", "type": "step-start"}},
    {"type": "tool_use", "timestamp": 1787482259124, "sessionID": "ses_fd1c15233ffe",
     "part": {"type": "tool", "tool": "read", "callID": "call_Kap3", "messageID": "msg_02e3eaf25001",
              "state": {"status": "completed", "input": {"filePath": "/tmp/probe.txt"}, "output": "PROBE"}}},
    {"type": "step_finish", "timestamp": 1787482259168, "sessionID": "ses_fd1c15233ffe",
     "part": {"reason": "tool-calls", "type": "step-finish", "cost": 0,
              "tokens": {"input": 7952, "output": 35, "reasoning": 24, "cache": {"write": 0, "read": 0}}}},
]  # fmt: skip
LOOKALIKES = {
    "qwen-code.jsonl": (QWEN, "Qwen Code"),
    "droid-session.jsonl": (DROID_SESSION, "Droid"),
    "droid-exec.jsonl": (DROID_STREAM, "Droid"),
    "opencode-run.jsonl": (OPENCODE, "opencode"),
}


def _jsonl(path: Path, lines: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _padded_copy(tmp_path: Path) -> Path:
    """The mini-swe-agent folder with every `info.submission` grown past 64 KiB (key order kept,
    so `mini_version` and `trajectory_format` fall after the first 64 KiB)."""
    root = tmp_path / MINI.parent.name / "trajs"  # the run folder names the ids
    for source in sorted(MINI.glob("*/*.traj.json")):
        doc = json.loads(source.read_bytes())
        doc["info"]["submission"] += "\n# padding" * 8000
        target = root / source.parent.name / source.name
        target.parent.mkdir(parents=True)
        target.write_text(json.dumps(doc))
        head = target.read_bytes()[:HEAD_BYTES]
        assert b'"mini_version"' not in head and b'"trajectory_format"' not in head
    return root


def test_padded_mini_swe_agent_folder_reads_identically(tmp_path: Path) -> None:
    original = read_paths([MINI])
    padded = read_paths([_padded_copy(tmp_path)])
    assert not padded.skipped and not padded.unread and not padded.failures
    assert len(padded.trajectories) == len(original.trajectories) == 6
    for before, after in zip(original.trajectories, padded.trajectories, strict=True):
        assert (after.id, after.task_id, after.model) == (before.id, before.task_id, before.model)
        assert after.source.format == "mini-swe-agent"
        assert [(s.kind, s.command, s.observation) for s in after.steps] == [
            (s.kind, s.command, s.observation) for s in before.steps
        ]


@pytest.mark.parametrize("name", sorted(LOOKALIKES))
def test_a_look_alike_is_named_not_read_as_an_empty_trajectory(tmp_path: Path, name: str) -> None:
    lines, agent = LOOKALIKES[name]
    path = _jsonl(tmp_path / name, lines)
    with pytest.raises(UnknownFormatError, match=agent):
        read_path(path)


def test_the_claude_reader_alone_would_claim_the_look_alikes(tmp_path: Path) -> None:
    """Why the guard is needed: Claude Code's own detection says yes to these files."""
    for name in ("qwen-code.jsonl", "droid-exec.jsonl"):
        path = _jsonl(tmp_path / name, LOOKALIKES[name][0])
        assert ClaudeCodeReader.handles_bytes(path.read_bytes())


def test_a_folder_of_look_alikes_gives_warnings_and_strict_fails(tmp_path: Path) -> None:
    for name, (lines, _) in LOOKALIKES.items():
        _jsonl(tmp_path / name, lines)
    result = read_paths([tmp_path])
    assert result.trajectories == [] and result.failures == []
    assert sorted(Path(u.split(":")[0]).name for u in result.unread) == sorted(LOOKALIKES)
    assert all("looks like a trace" in line for line in result.unread)
    strict = read_paths([tmp_path], strict=True)
    assert len(strict.failures) == len(LOOKALIKES) and strict.unread == []


def test_an_unknown_file_with_trace_keys_is_unread_not_skipped(tmp_path: Path) -> None:
    _jsonl(tmp_path / "agent-log.jsonl", [{"ts": 1, "events": [{"kind": "call"}]}])
    (tmp_path / "table.json").write_text(json.dumps({"rows": [1, 2, 3]}))
    result = read_paths([tmp_path])
    assert [Path(u.split(":")[0]).name for u in result.unread] == ["agent-log.jsonl"]
    assert '"events"' in result.unread[0]
    assert [Path(s.split(":")[0]).name for s in result.skipped] == ["table.json"]


def test_a_reader_that_finds_no_step_says_so(tmp_path: Path) -> None:
    lines = [{"sessionId": "s1", "parentUuid": None, "uuid": "u1", "type": "custom-note", "x": 1}]
    path = _jsonl(tmp_path / "session.jsonl", lines)
    (traj,) = read_path(path)
    assert traj.steps == []
    assert any("0 steps read" in w for w in traj.metadata["warnings"])


def test_sidecars_are_named_too(tmp_path: Path) -> None:
    shutil.copy(MINI.parent / "logs" / "django__django-11099" / "report.json", tmp_path)
    (tmp_path / "notes.md").write_text("notes")
    result = read_paths([tmp_path])
    assert sorted(Path(s.split(":")[0]).name for s in result.sidecars) == [
        "notes.md",
        "report.json",
    ]


def test_cli_names_unread_files_and_strict_fails(
    tmp_path: Path, run_cli: Callable[..., object]
) -> None:
    shutil.copy(next(MINI.glob("*/*.traj.json")), tmp_path)
    _jsonl(tmp_path / "qwen-code.jsonl", QWEN)
    result = run_cli("inspect", str(tmp_path))
    assert result.code == 0  # type: ignore[attr-defined]
    assert "qwen-code.jsonl: looks like a trace" in result.err  # type: ignore[attr-defined]
    assert "Qwen Code" in result.err  # type: ignore[attr-defined]
    strict = run_cli("inspect", "--strict", str(tmp_path))
    assert strict.code == 1  # type: ignore[attr-defined]
    assert "failed:" in strict.err and "qwen-code.jsonl" in strict.err  # type: ignore[attr-defined]


def test_the_lines_a_lookalike_is_judged_by_are_the_heads_first_lines() -> None:
    """`first_lines` gives what `head.splitlines()[:count]` does (`\\r\\n`, `\\r`, `\\n`; a cut
    last line; no line at all), without splitting the whole head."""
    import random

    from agentlens.formats._lookalikes import first_lines

    rng = random.Random(3)
    for _ in range(20000):
        head = bytes(rng.choice(b"ab\r\n\x0b\x85") for _ in range(rng.randrange(30)))
        for count in (0, 1, 2, 20):
            assert list(first_lines(head, count)) == head.splitlines()[:count], (head, count)


CLAUDE = FORMATS / "claude-code" / "marot-spotter"
CLAUDE_SESSION = CLAUDE / "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"


def test_a_walked_sub_agent_file_is_read_once_inside_its_session() -> None:
    """Walking a Claude Code project folder reaches `<session>/subagents/agent-*.jsonl` too: each
    is already a subtrajectory of its session, so it is named as such, not counted as a run."""
    subs = sorted((CLAUDE / CLAUDE_SESSION.stem / "subagents").glob("agent-*.jsonl"))
    result = read_paths([CLAUDE])
    assert sorted(Path(t.source.path).name for t in result.trajectories) == sorted(
        p.name for p in CLAUDE.glob("*.jsonl")
    )
    (session,) = [t for t in result.trajectories if t.source.path == str(CLAUDE_SESSION)]
    assert [Path(s.source.path) for s in session.subtrajectories] == subs
    linked = [s for s in result.sidecars if "subagents" in s]
    assert [Path(s.split(": ")[0]).name for s in linked] == [p.name for p in subs]
    assert all(f"a sub-agent, read inside {CLAUDE_SESSION}" in s for s in linked)


def test_sub_agent_files_without_their_session_in_the_batch_are_read() -> None:
    folder = CLAUDE / CLAUDE_SESSION.stem / "subagents"
    alone = read_paths([folder])
    assert len(alone.trajectories) == 2
    (named,) = read_paths([next(folder.glob("agent-*.jsonl"))]).trajectories
    assert named.parent_id == "4d5611e5-241a-462a-8d15-5122611a9569"


def test_sub_agents_walked_from_inside_their_session_folder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(CLAUDE / CLAUDE_SESSION.stem)
    assert len(read_paths(["."]).trajectories) == 2  # the session is not in the walk
    assert len(read_paths([".."]).trajectories) == 4


def test_a_folder_the_walk_cannot_list_is_a_failure_not_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run folder without read permission (injected: the tests run as root) was passed over
    by `os.walk` without a word; it is one failure naming the folder and why."""
    import os

    for task in sorted(MINI.iterdir())[:2]:
        shutil.copytree(task, tmp_path / task.name)
    locked = tmp_path / sorted(MINI.iterdir())[1].name
    real_scandir = os.scandir

    def scandir(path: object = ".") -> object:
        if Path(str(path)) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)
    result = read_paths([tmp_path])
    assert len(result.trajectories) == 1
    (failure,) = result.failures
    assert failure.path == str(locked) and failure.reason == "cannot read: Permission denied"


HARBOR = FORMATS / "atif-harbor-golden" / "tests" / "golden" / "terminus_2"
HARBOR_PARENT = HARBOR / "hello-world-context-summarization.trajectory.json"


def test_a_walked_harbor_sub_agent_file_is_read_once_inside_its_trajectory() -> None:
    """`trajectory.json` reads the `trajectory.summarization-1-*.json` files its
    `subagent_trajectory_ref`s name; walked, they were also runs of their own (3 extra runs)."""
    subs = sorted(HARBOR.glob("hello-world-context-summarization.trajectory.summarization-*"))
    assert len(subs) == 3
    result = read_paths([HARBOR])
    paths = [Path(t.source.path) for t in result.trajectories]
    assert not set(subs) & set(paths)
    (parent,) = [t for t in result.trajectories if Path(t.source.path) == HARBOR_PARENT]
    assert sorted(Path(s.source.path) for s in parent.subtrajectories) == subs
    linked = [s for s in result.sidecars if "summarization-1-" in s and "a sub-agent" in s]
    assert len(linked) == 3 and all(f"read inside {HARBOR_PARENT}" in s for s in linked)
    # a continuation no trajectory names is still a run of its own
    cont = HARBOR / "hello-world-context-summarization-linear-history.trajectory.cont-1.json"
    assert cont in paths
    (alone,) = read_paths([subs[0]]).trajectories  # named, it is read
    assert Path(alone.source.path) == subs[0]
