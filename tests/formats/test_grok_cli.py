"""Grok CLI session folder: counts checked against the raw updates and their siblings."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

from agentlens.formats import detect, read_path
from agentlens.formats.grok_cli import GrokCliReader
from tests.conftest import FORMATS

FOLDER = FORMATS / "grok-cli"
UPDATES = FOLDER / "updates.jsonl"


def _updates(kind: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in UPDATES.read_text().splitlines() if line.strip()]
    return [u["params"]["update"] for u in lines if u["params"]["update"]["sessionUpdate"] == kind]


def test_counts_match_the_raw_updates() -> None:
    (traj,) = read_path(UPDATES)
    assert detect(UPDATES, UPDATES.read_bytes()).name == "grok-cli"
    calls = _updates("tool_call")
    assert [s.call_id for s in traj.tool_steps] == [c["toolCallId"] for c in calls]
    assert [s.tool_name for s in traj.tool_steps] == [
        c["_meta"]["x.ai/tool"]["name"] for c in calls
    ]
    assert [s.arguments for s in traj.tool_steps] == [c["rawInput"] for c in calls]
    results = {u["toolCallId"]: u for u in _updates("tool_call_update")}
    failed = [i for i, u in results.items() if u["status"] == "failed"]
    bad_exit = [i for i, u in results.items() if u["rawOutput"].get("exit_code", 0) not in (0, 1)]
    assert sorted(s.call_id or "" for s in traj.tool_steps if s.is_error) == sorted(
        failed + bad_exit
    )
    summary = json.loads((FOLDER / "summary.json").read_text())
    signals = json.loads((FOLDER / "signals.json").read_text())
    assert traj.id == summary["info"]["id"]
    assert traj.model == signals["primaryModelId"]
    assert traj.usage_known() is None  # the folder holds no billed token counts
    assert traj.metadata["context_tokens_at_end"] == signals["contextTokensUsed"]


def test_categories() -> None:
    (traj,) = read_path(UPDATES)
    assert [str(s.category) for s in traj.tool_steps] == [
        "read_file", "search", "search", "create_file", "edit", "run_command", "think",
        "create_file", "other",
    ]  # fmt: skip
    bash = next(s for s in traj.tool_steps if s.tool_name == "run_terminal_command")
    assert bash.command == bash.arguments["command"]


def test_updates_alone_still_read(tmp_path: Path) -> None:
    shutil.copy(UPDATES, tmp_path / "updates.jsonl")
    (traj,) = read_path(tmp_path / "updates.jsonl")
    assert traj.id == tmp_path.name
    assert traj.model is None
    assert len(traj.tool_steps) == len(_updates("tool_call"))


def _with_user_chunks(folder: Path, count: int) -> Path:
    """The real session folder, its updates led by `count` chunks of one pasted user prompt (ACP
    streams a message in chunks)."""
    shutil.copytree(FOLDER, folder)
    chunks = [
        {
            "method": "session/update",
            "params": {
                "update": {
                    "sessionUpdate": "user_message_chunk",
                    "content": {"type": "text", "text": f"line {i:07d} of a long pasted prompt\n"},
                }
            },
            "timestamp": 1767225599,
        }
        for i in range(count)
    ]
    head = b"".join(json.dumps(chunk).encode() + b"\n" for chunk in chunks)
    (folder / "updates.jsonl").write_bytes(head + UPDATES.read_bytes())
    return folder / "updates.jsonl"


def test_a_message_in_many_chunks_is_read_in_linear_time(tmp_path: Path) -> None:
    """Found by attack: each user chunk was added to the step's text with `+=`, copying all
    the text so far; a 20 MB file of 100k chunks took 97 s."""

    def seconds(count: int) -> float:
        path = _with_user_chunks(tmp_path / str(count), count)
        data, runs = path.read_bytes(), []
        for _ in range(3):
            start = time.process_time()
            (traj,) = GrokCliReader().read(path, data)
            runs.append(time.process_time() - start)
        assert traj.steps[0].text.count("\n") == count  # one user step, every chunk in it
        return min(runs)

    ratio = seconds(40_000) / seconds(10_000)
    assert ratio < 8, f"4x the chunks took {ratio:.1f}x the time (linear: 4, quadratic: 16)"
