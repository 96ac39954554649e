"""Gemini CLI 2026 JSONL session: counts checked against an independent fold of the raw lines."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from agentlens.formats import detect, read_path
from agentlens.formats.gemini_cli_jsonl import GeminiCliJsonlReader
from tests.conftest import FORMATS

SESSION = FORMATS / "gemini-cli-jsonl" / "session.jsonl"
CROSS_CHECK = FORMATS / "gemini-cli-jsonl" / "vibecodingtracker.expected.json"


def _lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in SESSION.read_text().splitlines() if line.strip()]


def _messages_by_id() -> dict[str, dict[str, Any]]:
    """Last written version of each message id, in first-seen order (how the CLI folds it)."""
    messages: dict[str, dict[str, Any]] = {}
    for line in _lines():
        if "id" in line:
            messages[line["id"]] = line
    return messages


def test_counts_match_the_folded_raw_log() -> None:
    lines = _lines()
    messages = list(_messages_by_id().values())
    assert len(messages) < sum("id" in line for line in lines)  # the log does repeat messages
    (traj,) = read_path(SESSION)
    assert detect(SESSION, SESSION.read_bytes()[:65536]).name == "gemini-cli-jsonl"
    assert traj.id == lines[0]["sessionId"]
    calls = [c for m in messages for c in m.get("toolCalls") or []]
    assert [s.tool_name for s in traj.tool_steps] == [c["name"] for c in calls]
    assert [s.call_id for s in traj.tool_steps] == [c["id"] for c in calls]
    users = [m for m in messages if m["type"] == "user"]
    assert sum(s.kind == "user" for s in traj.steps) == len(users)
    texts_only = [m for m in messages if m["type"] == "gemini" and not m.get("toolCalls")]
    assert sum(s.kind == "agent" for s in traj.steps) == len(texts_only)
    tokens = [m["tokens"] for m in messages if m.get("tokens")]
    usage = traj.usage_total()
    assert usage.prompt_tokens == sum(t["input"] for t in tokens)
    assert usage.completion_tokens == sum(t["output"] + t["thoughts"] for t in tokens)
    assert usage.cached_tokens == sum(t["cached"] for t in tokens)
    assert (
        traj.metadata["lastUpdated"] == [x for x in lines if "$set" in x][-1]["$set"]["lastUpdated"]
    )


def test_cross_check_with_vibecodingtracker() -> None:
    """That project counts input without the cached part, output without thoughts, and leaves
    out `update_topic` calls; on those terms the figures agree."""
    (record,) = json.loads(CROSS_CHECK.read_text())["records"]
    (traj,) = read_path(SESSION)
    theirs = record["conversationUsage"]
    for model, figures in theirs.items():
        steps = [s for s in traj.steps if s.model == model and s.usage]
        cached = sum(s.usage.cached_tokens for s in steps if s.usage)
        prompt = sum(s.usage.prompt_tokens for s in steps if s.usage)
        completion = sum(s.usage.completion_tokens for s in steps if s.usage)
        assert (prompt - cached, cached) == (
            figures["input_tokens"],
            figures["cache_read_input_tokens"],
        )
        assert completion == figures["output_tokens"] + figures["thoughts_tokens"]
    counted = [s for s in traj.tool_steps if s.tool_name != "update_topic"]
    categories = [str(s.category) for s in counted]
    assert categories.count("read_file") == record["toolCallCounts"]["Read"]
    assert categories.count("edit") == record["toolCallCounts"]["Edit"]
    assert categories.count("create_file") == record["toolCallCounts"]["Write"]


def _write(tmp_path: Path, lines: list[dict[str, Any]]) -> Path:
    path = tmp_path / "session-2026-04-23T12-52-0ab84937.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_rewind_drops_the_message_and_everything_after(tmp_path: Path) -> None:
    lines = _lines()
    second_user = [m for m in _messages_by_id().values() if m["type"] == "user"][1]
    path = _write(tmp_path, [*lines, {"$rewindTo": second_user["id"]}])
    (traj,) = read_path(path)
    kept = list(_messages_by_id())
    kept = kept[: kept.index(second_user["id"])]
    assert traj.metadata["folded"]["rewinds"] == 1
    assert sum(s.kind == "user" for s in traj.steps) == 1
    (whole,) = read_path(SESSION)
    assert len(traj.steps) < len(whole.steps)
    assert all(s.raw is None or s.raw["id"] in kept for s in traj.steps)


def test_set_messages_replaces_the_history(tmp_path: Path) -> None:
    lines = _lines()
    first_two = list(_messages_by_id().values())[:2]
    path = _write(tmp_path, [*lines, {"$set": {"messages": first_two}}])
    (traj,) = read_path(path)
    assert [s.kind for s in traj.steps] == ["system", "user"]
    assert traj.metadata["folded"]["history_rewrites"] == 1


def test_thoughts_of_a_message_with_calls_become_its_first_call_text() -> None:
    """A response that only thinks then calls tools (no `content`) keeps its reasoning, as a
    response without calls does: on the text of its first call, as the Copilot reader does."""
    (traj,) = read_path(SESSION)
    firsts = {s.raw["id"]: s for s in traj.tool_steps if isinstance(s.raw, dict)}
    silent = [m for m in _messages_by_id().values() if m.get("toolCalls") and not m["content"]]
    assert len(silent) == 4
    for message in silent:
        thoughts = [t["description"] for t in message["thoughts"]]
        assert firsts[message["id"]].text == " ".join(thoughts)


def test_an_image_part_of_a_prompt_is_named_not_dropped(tmp_path: Path) -> None:
    """A pasted image is an `inlineData` part of the user message's content: it shows as
    `[inlineData]` beside the text, as images in Claude Code prompts and tool results do."""
    lines = _lines()
    prompt = next(line for line in lines if line.get("type") == "user")
    image = {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    prompt["content"] = [image, *prompt["content"]]
    copy = tmp_path / SESSION.name
    copy.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (original,) = read_path(SESSION)
    (read,) = read_path(copy)
    assert read.steps[1].text == "[inlineData]\n" + original.steps[1].text


def test_a_rewind_to_an_unknown_message_is_named(tmp_path: Path) -> None:
    """The CLI only writes `$rewindTo` for a message it holds; an unknown id (a log cut or
    edited) clears the history as the CLI's own loader does, and says so."""
    copy = tmp_path / SESSION.name
    copy.write_text(SESSION.read_text() + json.dumps({"$rewindTo": "no-such-message"}) + "\n")
    (traj,) = read_path(copy)
    held = len(_messages_by_id())
    assert traj.steps == []
    assert traj.metadata["warnings"][0] == (
        f"line {len(_lines()) + 1}: $rewindTo an unknown message 'no-such-message' "
        f"dropped all {held} messages"
    )


def test_a_log_of_rewinds_is_read_in_linear_time(tmp_path: Path) -> None:
    """Found by attack: each `$rewindTo` listed every message held to find its cut, so a log
    that keeps many messages and rewinds often was quadratic (40k rewinds over 20k messages
    took 6 s; 100k, minutes)."""
    lines = _lines()
    info = next(line for line in lines if line.get("type") == "info")

    def seconds(count: int) -> float:
        held = [info | {"id": f"kept-{i}"} for i in range(count)]
        undone = [
            [info | {"id": f"undone-{i}"}, {"$rewindTo": f"undone-{i}"}] for i in range(count)
        ]
        path = _write(tmp_path, [*lines, *held, *[line for pair in undone for line in pair]])
        data, runs = path.read_bytes(), []
        for _ in range(2):
            start = time.process_time()
            (traj,) = GeminiCliJsonlReader().read(path, data)
            runs.append(time.process_time() - start)
        assert traj.metadata["folded"]["rewinds"] == count
        assert sum(isinstance(s.raw, dict) and s.raw["id"] == "kept-0" for s in traj.steps) == 1
        return min(runs)

    ratio = seconds(20_000) / seconds(5_000)
    assert ratio < 8, f"4x the rewinds took {ratio:.1f}x the time (linear: 4, quadratic: 16)"
