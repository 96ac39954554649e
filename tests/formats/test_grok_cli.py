"""Grok CLI session folder: counts checked against the raw updates and their siblings."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from agentlens.formats import detect, read_path
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
