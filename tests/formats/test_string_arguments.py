"""A call whose arguments come as a JSON string (an older or differently serialised log) reads as
the same call with an object: its arguments, command and files are never silently dropped."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentlens.formats import read_path
from tests.conftest import FORMATS


def _copilot(line: dict[str, Any]) -> None:
    data = line.get("data") or {}
    for request in data.get("toolRequests") or []:
        request["arguments"] = json.dumps(request["arguments"])
    if line.get("type") == "tool.execution_start":
        data["arguments"] = json.dumps(data["arguments"])


def _grok(line: dict[str, Any]) -> None:
    update = line["params"]["update"]
    if "rawInput" in update:
        update["rawInput"] = json.dumps(update["rawInput"])


def _gemini(message: dict[str, Any]) -> None:
    for call in message.get("toolCalls") or []:
        call["args"] = json.dumps(call["args"])


def _claude(line: dict[str, Any]) -> None:
    content = (line.get("message") or {}).get("content")
    for block in content if isinstance(content, list) else []:
        if block.get("type") == "tool_use":
            block["input"] = json.dumps(block["input"])


CASES: dict[str, tuple[str, Callable[[dict[str, Any]], None]]] = {
    "copilot-cli": ("copilot-cli/events.jsonl", _copilot),
    "grok-cli": ("grok-cli/updates.jsonl", _grok),
    "gemini-cli-jsonl": ("gemini-cli-jsonl/session.jsonl", _gemini),
    "claude-code": ("claude-code/marot-spotter/tool_heavy.jsonl", _claude),
}


def _calls(path: Path) -> list[tuple[Any, ...]]:
    (traj,) = read_path(path)
    return [(s.tool_name, s.category, s.arguments, s.command, s.files) for s in traj.tool_steps]


@pytest.mark.parametrize("name", CASES)
def test_arguments_given_as_a_json_string_are_read(name: str, tmp_path: Path) -> None:
    sample, stringify = CASES[name]
    original = FORMATS / sample
    for sibling in original.parent.glob("*.json"):  # the Grok folder's summary and signals
        shutil.copy(sibling, tmp_path / sibling.name)
    lines = [json.loads(line) for line in original.read_text().splitlines() if line.strip()]
    for line in lines:
        stringify(line)
    copy = tmp_path / original.name
    copy.write_text("".join(json.dumps(line) + "\n" for line in lines))
    calls = _calls(original)
    assert any(arguments for _, _, arguments, _, _ in calls)
    assert _calls(copy) == calls


def test_gemini_session_arguments_given_as_a_json_string_are_read(tmp_path: Path) -> None:
    original = FORMATS / "gemini-cli" / "session-2025-10-27T19-55-981c87cb.json"
    doc = json.loads(original.read_text())
    for message in doc["messages"]:
        _gemini(message)
    copy = tmp_path / original.name
    copy.write_text(json.dumps(doc))
    assert _calls(copy) == _calls(original)


def test_arguments_that_are_no_object_are_kept_not_dropped(tmp_path: Path) -> None:
    original = FORMATS / "copilot-cli" / "events.jsonl"
    lines = [json.loads(line) for line in original.read_text().splitlines() if line.strip()]
    start = next(line for line in lines if line["type"] == "assistant.message")
    start["data"]["toolRequests"][0]["arguments"] = "not json"
    copy = tmp_path / original.name
    copy.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (traj,) = read_path(copy)
    assert traj.tool_steps[0].arguments == {"_raw": "not json"}
