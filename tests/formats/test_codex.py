from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentlens.formats import detect, read_path
from tests.conftest import FORMATS

ROOT = FORMATS / "codex"
ROLLOUTS = sorted(ROOT.rglob("rollout-*.jsonl"))
STREAMS = sorted((ROOT / "jnarowski-agentcmd" / "stream").glob("*.jsonl"))
CALLS = {"function_call", "custom_tool_call"}


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _items(path: Path) -> list[dict[str, Any]]:
    return [o["payload"] for o in _lines(path) if o["type"] == "response_item"]


def _segmented_total(path: Path) -> tuple[int, int, int]:
    """Sum of cumulative totals, restarting whenever the running total goes down."""
    done, last = [0, 0, 0], [0, 0, 0]
    for line in _lines(path):
        info = line["payload"].get("info") if line["payload"].get("type") == "token_count" else None
        if not info:
            continue
        t = info["total_token_usage"]
        now = [t["input_tokens"], t["output_tokens"], t["cached_input_tokens"]]
        if now[0] < last[0]:
            done = [a + b for a, b in zip(done, last, strict=True)]
        last = now
    return tuple(a + b for a, b in zip(done, last, strict=True))  # type: ignore[return-value]


def test_all_files_are_found() -> None:
    assert (len(ROLLOUTS), len(STREAMS)) == (5, 6)


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.name[-16:])
def test_rollout_counts_match_the_raw_lines(path: Path) -> None:
    assert detect(path, path.read_bytes()[:65536]).name == "codex-rollout"
    (traj,) = read_path(path)
    calls = [i for i in _items(path) if i["type"] in CALLS]
    assert [s.call_id for s in traj.tool_steps] == [c["call_id"] for c in calls]
    assert [s.tool_name for s in traj.tool_steps] == [c["name"] for c in calls]
    usage = traj.usage_total()
    assert (usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens) == (
        _segmented_total(path)
    )
    assert traj.reported_usage == usage
    lines = _lines(path)
    meta = next(o["payload"] for o in lines if o["type"] == "session_meta")
    models = [o["payload"]["model"] for o in lines if o["type"] == "turn_context"]
    assert (traj.id, traj.agent.version, traj.model) == (
        meta["id"],
        meta["cli_version"],
        models[-1],
    )


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.name[-16:])
def test_parallel_calls_of_one_response_share_a_turn(path: Path) -> None:
    model_items = CALLS | {"reasoning"}
    responses, in_response, with_calls = 0, False, set()
    for item in _items(path):
        is_model = item["type"] in model_items or item.get("role") == "assistant"
        if is_model and not in_response:
            responses += 1
        in_response = is_model
        if item["type"] in CALLS:
            with_calls.add(responses)
    (traj,) = read_path(path)
    assert len({s.turn for s in traj.tool_steps}) == len(with_calls)
    assert max(s.turn for s in traj.steps if s.turn is not None) == responses - 1


def test_shell_output_and_exit_code_of_cli_040() -> None:
    path = next(p for p in ROLLOUTS if "95dda01c36e" in p.name)
    outputs = {
        i["call_id"]: i["output"] for i in _items(path) if i["type"] == "function_call_output"
    }
    (traj,) = read_path(path)
    sandbox_failures = 0
    for step in traj.tool_steps:
        text = outputs[step.call_id]
        if text.startswith("{"):
            wrapped = json.loads(text)
            assert step.observation == wrapped["output"]
            assert step.is_error == (wrapped["metadata"]["exit_code"] != 0)
        else:  # the sandbox refused to run it: plain text naming the exit code
            sandbox_failures += 1
            assert step.observation == text
            assert step.is_error is ("exit code: 0" not in text)
        argv = step.arguments["command"]
        assert step.command == (argv[2] if argv[1] == "-lc" else " ".join(argv))
    assert sandbox_failures > 0
    assert traj.category_counts()["read_file"] > 0


@pytest.mark.parametrize("path", STREAMS, ids=lambda p: p.name)
def test_exec_stream_counts_match_the_raw_events(path: Path) -> None:
    assert detect(path, path.read_bytes()[:65536]).name == "codex-exec"
    events = _lines(path)
    (traj,) = read_path(path)
    done = [e["item"] for e in events if e["type"] == "item.completed"]
    commands = [i for i in done if i["type"] == "command_execution"]
    mine = [s for s in traj.tool_steps if s.tool_name == "command_execution"]
    assert [s.observation for s in mine] == [c["aggregated_output"] for c in commands]
    assert [s.is_error for s in mine] == [c["exit_code"] != 0 for c in commands]
    messages = [i["text"] for i in done if i["type"] == "agent_message"]
    assert [s.text.split("\n\n")[-1] for s in traj.steps if s.kind == "agent"] == messages
    usage = [e["usage"] for e in events if e["type"] == "turn.completed"]
    assert traj.usage_total().prompt_tokens == sum(u["input_tokens"] for u in usage)
    assert traj.usage_total().completion_tokens == sum(u["output_tokens"] for u in usage)
    assert traj.id == events[0]["thread_id"]


def test_exec_file_change_names_the_files() -> None:
    (traj,) = read_path(ROOT / "jnarowski-agentcmd/stream/stream-output-3.jsonl")
    (change,) = [s for s in traj.tool_steps if s.tool_name == "file_change"]
    assert change.category == "create_file"
    assert change.files == ["/private/tmp/codex-research-test/hello.txt"]


def _read(path: Path, data: bytes) -> list[Any]:
    from agentlens.formats.codex_rollout import CodexRolloutReader

    return list(CodexRolloutReader().read(path, data))


def test_rollout_line_layout_does_not_change_what_is_read() -> None:
    """The typed decoder reads the whole file at once; blank lines, CRLF endings and a missing
    final newline take the line-by-line path and must give the same trajectory."""
    path = ROLLOUTS[0]
    data = path.read_bytes()
    original = _read(path, data)
    for variant in (
        data.replace(b"\n", b"\n\n"),
        data.replace(b"\n", b"\r\n"),
        data.rstrip(b"\n"),
    ):
        assert _read(path, variant) == original


def test_rollout_line_that_is_not_an_object_is_skipped_with_a_warning() -> None:
    path = ROLLOUTS[0]
    data = path.read_bytes()
    [original] = _read(path, data)
    lines = data.count(b"\n")
    extra = b'[1, 2]\n{"type": "response_item", "payload": "oops"}\n'
    [read] = _read(path, data + extra)
    assert read.steps == original.steps
    assert read.metadata["warnings"] == [
        f"line {lines + 1}: skipped (not a JSON object)",
        f"line {lines + 2}: response_item skipped (its payload is not an object)",
    ]


def test_rollout_output_of_an_unknown_call_is_not_dropped_silently() -> None:
    """A rollout cut at the front (or edited) keeps outputs whose call is gone: each is named."""
    path = ROLLOUTS[0]
    lines = _lines(path)
    at = next(i for i, o in enumerate(lines) if o["payload"].get("type") in CALLS)
    call_id = lines.pop(at)["payload"]["call_id"]
    output = next(i for i, o in enumerate(lines, 1) if o["payload"].get("call_id") == call_id)
    data = b"".join(json.dumps(o).encode() + b"\n" for o in lines)
    [read] = _read(path, data)
    assert all(s.call_id != call_id for s in read.steps)
    assert read.metadata["warnings"] == [
        f"line {output}: output of unknown call {call_id!r} skipped"
    ]


def test_rollout_broken_line_is_named() -> None:
    from agentlens.errors import TraceError

    path = ROLLOUTS[0]
    lines = path.read_bytes().splitlines(keepends=True)
    broken = b"".join([*lines[:3], b"\n", b'{"type": "event_msg", "payload": \n', *lines[3:]])
    with pytest.raises(TraceError, match="invalid JSON on line 5"):
        _read(path, broken)


def test_rollout_reasoning_summary_of_the_wrong_type_is_a_schema_error() -> None:
    from agentlens.errors import SchemaError

    path = ROLLOUTS[0]
    lines = [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    reasoning = next(o for o in lines if o["payload"].get("type") == "reasoning")
    reasoning["payload"]["summary"] = 7
    data = b"".join(json.dumps(o).encode() + b"\n" for o in lines)
    with pytest.raises(SchemaError, match="reasoning summary should be an array, found number"):
        _read(path, data)


def test_rollout_compaction_summary_is_a_system_step() -> None:
    """cli 0.4x+ writes `{"type": "compacted", "payload": {"message": …}}` when it compacts the
    context: the summary the model goes on from is kept where it happened, not dropped."""
    path = ROLLOUTS[0]
    lines = _lines(path)
    at = next(i for i, o in enumerate(lines) if o["payload"].get("type") == "function_call_output")
    summary = "Summary of the work so far: the parser is fixed, tests remain."
    lines.insert(at + 1, {"timestamp": lines[at]["timestamp"], "type": "compacted",
                          "payload": {"message": summary, "replacement_history": []}})  # fmt: skip
    data = b"".join(json.dumps(o).encode() + b"\n" for o in lines)
    [original] = _read(path, path.read_bytes())
    [read] = _read(path, data)
    (step,) = [s for s in read.steps if s.text == summary]
    assert step.kind == "system"
    assert [s.text for s in read.steps if s is not step] == [s.text for s in original.steps]
