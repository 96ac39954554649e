"""mini-swe-agent reader on the real files: the bare-list fixtures, the Gemini 3 Pro
`mini-swe-agent-1` runs (checked against their raw JSON and the labels.csv verdicts) and the
Harbor RFC example."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentlens.errors import SchemaError, TraceError
from agentlens.formats import read_path, read_paths
from agentlens.formats._fenced_commands import command_blocks
from agentlens.formats.mini_swe_agent import MiniSweAgentReader
from agentlens.trajectory import ToolCategory
from tests.conftest import DATA, FORMATS

SWEBV = DATA / "mini-swe-agent-swebv"
RUNS = sorted((SWEBV / "trajs").glob("*/*.traj.json"))
FIXTURES = sorted((FORMATS / "mini-swe-agent-fixtures").glob("*.traj.json"))
RFC = FORMATS / "atif-harbor-golden/docs/rfcs/0001-trajectory-format/mini-swe-agent-trajectory.json"
BLOCK = re.compile(r"```(bash|mswea_bash_command)\s*\n(.*?)\n```", re.DOTALL)


def _text(content: str | list[dict]) -> str:
    return content if isinstance(content, str) else "".join(p["text"] for p in content)


def _messages(path: Path) -> list[dict]:
    doc = json.loads(path.read_text())
    return doc if isinstance(doc, list) else doc["messages"]


@pytest.mark.parametrize("path", [*RUNS, *FIXTURES, RFC], ids=lambda p: p.name)
def test_counts_commands_and_observations(path: Path) -> None:
    messages = _messages(path)
    (traj,) = read_path(path)
    assert traj.source.format == "mini-swe-agent"
    expected = []
    for i, message in enumerate(messages):
        text = _text(message["content"])
        blocks = BLOCK.findall(text) if message["role"] == "assistant" else []
        if len(blocks) == 1:
            reply = _text(messages[i + 1]["content"]) if i + 1 < len(messages) else None
            expected.append((blocks[0][1], reply))
    assert [(s.command, s.observation) for s in traj.tool_steps] == expected
    assert traj.tool_steps[-1].category is ToolCategory.FINISH


# pieces that make fences open, close, nest and back off (whitespace runs with several newlines)
FENCE_PIECES = [
    "```",
    "`",
    "bash",
    "mswea_bash_command",
    "\n",
    " ",
    "\t",
    "\r",
    "\x85",
    "x",
    "\n```",
]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(FENCE_PIECES), max_size=24).map("".join))
def test_blocks_are_what_the_agents_own_regex_finds(text: str) -> None:
    assert command_blocks(text) == [(m.start(), m[2]) for m in BLOCK.finditer(text)]


@pytest.mark.parametrize("path", [*RUNS, RFC], ids=lambda p: p.name)
def test_usage_cost_and_model(path: Path) -> None:
    doc = json.loads(path.read_text())
    usages = [
        m["extra"]["response"]["usage"]
        for m in doc["messages"]
        if m["role"] == "assistant" and "extra" in m
    ]
    (traj,) = read_path(path)
    usage = traj.usage_total()
    assert usage.prompt_tokens == sum(u["prompt_tokens"] for u in usages)
    assert usage.completion_tokens == sum(u["completion_tokens"] for u in usages)
    assert traj.reported_cost == doc["info"]["model_stats"]["instance_cost"]
    if all("cost" in u for u in usages):
        assert traj.cost_total() == pytest.approx(sum(u["cost"] for u in usages))
    assert traj.model == doc["info"]["config"]["model"]["model_name"]
    assert traj.agent.version == doc["info"]["mini_version"]


def test_outcomes_agree_with_labels_csv() -> None:
    with (SWEBV / "labels.csv").open() as handle:
        labels = {row["task_id"]: row["label"] for row in csv.DictReader(handle)}
    found = {}
    for traj in read_paths(RUNS).trajectories:  # the reader, then the sidecar verdicts
        found[traj.task_id] = traj.outcome.status
        assert traj.outcome.source == "report.json"
    assert found == {t: "passed" if v == "pass" else "failed" for t, v in labels.items()}


def test_returncode_sets_is_error() -> None:
    (traj,) = read_path(RUNS[0])
    for step in traj.tool_steps:
        match = re.search(r"<returncode>(-?\d+)</returncode>", step.observation or "")
        assert step.is_error == (int(match[1]) != 0 if match else None)


def test_plain_message_lists_are_left_to_the_openai_reader() -> None:
    plain = b'[{"role": "system", "content": "hi"}, {"role": "user", "content": "yo"}]'
    assert not MiniSweAgentReader.handles_bytes(plain)
    assert MiniSweAgentReader.handles_bytes(FIXTURES[0].read_bytes())


@pytest.mark.parametrize(
    "data, error, message",
    [
        (
            b'{"info": {"mini_version": "1"}, "trajectory_format": "mini-swe-agent-1"}',
            SchemaError,
            "'messages' should be a list",
        ),
        (
            b'{"info": {"mini_version": "1"}, "messages": [{"content": "x"}]}',
            SchemaError,
            "message 0 has no 'role'",
        ),
        (RUNS[0].read_bytes()[:3000], TraceError, "truncated"),
    ],
    ids=["no messages", "no role", "truncated"],
)
def test_wrong_shape_and_bad_json_are_named(
    read_error: Callable[[str, bytes], TraceError], data: bytes, error: type, message: str
) -> None:
    found = read_error("a.traj.json", data)
    assert isinstance(found, error) and message in str(found)


def test_sb_cli_report_is_the_fallback_verdict(tmp_path: Path) -> None:
    # The run layout without per-instance logs: trajs/<id>/<id>.traj.json + the sb-cli report.
    run = RUNS[0]
    target = tmp_path / "trajs" / run.parent.name / run.name
    target.parent.mkdir(parents=True)
    target.write_bytes(run.read_bytes())
    (tmp_path / "sb-cli-report.json").write_bytes((SWEBV / "sb-cli-report.json").read_bytes())
    report = json.loads((SWEBV / "sb-cli-report.json").read_text())
    (traj,) = read_paths([target]).trajectories
    assert traj.outcome.source == "sb-cli-report"
    resolved = traj.task_id in report["resolved_ids"]
    assert traj.outcome.status == ("passed" if resolved else "failed")


def test_v2_actions_and_parallel_tool_calls(tmp_path: Path) -> None:
    # No v2 (`mini-swe-agent-1.1`) run is shipped; messages follow its docs/usage/output_files.md.
    head = json.loads(RUNS[0].read_text())["messages"][:2]
    text_turn = {
        "role": "assistant",
        "content": "Look.\n\n```mswea_bash_command\nls -la\n```",
        "extra": {"actions": [{"command": "ls -la"}], "cost": 0.003, "timestamp": 1706000000.0},
    }
    text_result = {"role": "user", "content": "<returncode>2</returncode>\n<output>\nx\n</output>"}
    calls = [
        {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": c})},
        }
        for i, c in enumerate(["cat a.py", "grep -n foo b.py"])
    ]
    tool_turn = {"role": "assistant", "content": "", "tool_calls": calls, "extra": {"cost": 0.01}}
    results = [
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": "<returncode>0</returncode><output>3:foo</output>",
        },
        {
            "role": "tool",
            "tool_call_id": "c0",
            "content": "<returncode>0</returncode><output>a</output>",
        },
    ]
    doc = {
        "info": {"mini_version": "2.0.0", "model_stats": {"instance_cost": 0.013}},
        "messages": [*head, text_turn, text_result, tool_turn, *results],
        "trajectory_format": "mini-swe-agent-1.1",
    }
    path = tmp_path / "x.traj.json"
    path.write_text(json.dumps(doc))
    (traj,) = read_path(path)
    ls, cat, grep = traj.tool_steps
    assert (ls.command, ls.is_error, ls.cost) == ("ls -la", True, 0.003)
    assert ls.timestamp is not None and ls.timestamp.year == 2024
    assert (cat.category, cat.observation) == (ToolCategory.READ_FILE, results[1]["content"])
    assert (grep.category, grep.observation) == (ToolCategory.SEARCH, results[0]["content"])
    assert cat.turn == grep.turn != ls.turn
    assert traj.cost_total() == pytest.approx(0.013)


def test_timestamps_and_a_fence_before_the_command(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    doc = json.loads(RUNS[0].read_text())
    replies = [m for m in doc["messages"] if m["role"] == "assistant"]
    created = [m["extra"]["response"]["created"] for m in replies]
    (traj,) = read_path(RUNS[0])
    turns = {s.turn: s.timestamp for s in traj.steps if s.turn is not None}
    assert [turns[i] for i in range(len(replies))] == [
        datetime.fromtimestamp(c, tz=UTC) for c in created
    ]
    # a ```python example before the ```bash block: the command is still the bash block's
    first = replies[0]
    command = BLOCK.findall(first["content"])[0][1]
    first["content"] = "See:\n```python\nprint('```bash')\n```\n" + first["content"]
    first["extra"]["timestamp"] = "2025-11-19T00:00:00Z"  # v2 files stamp the reply itself
    edited = tmp_path / "edited.traj.json"
    edited.write_text(json.dumps(doc))
    (traj,) = read_path(edited)
    step = traj.tool_steps[0]
    assert step.command == command
    assert step.text.startswith("See:\n```python")
    assert step.timestamp == datetime(2025, 11, 19, tzinfo=UTC)


def test_a_value_of_the_wrong_type_is_a_schema_error(tmp_path: Path) -> None:
    doc = json.loads(RUNS[0].read_text())
    reply = next(m for m in doc["messages"] if m["role"] == "assistant")
    reply["extra"]["response"]["usage"]["completion_tokens"] = [1, 2]
    bad = tmp_path / "bad.traj.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(SchemaError, match=r"bad\.traj\.json.*unexpected type"):
        list(MiniSweAgentReader().read(bad, bad.read_bytes()))


@pytest.mark.parametrize("value", [[1], {"a": 1}, True])
def test_an_instance_id_that_is_not_a_string_or_number_is_a_schema_error(
    tmp_path: Path, value: object
) -> None:
    doc = json.loads(RUNS[0].read_text())
    doc["instance_id"] = value
    bad = tmp_path / "bad.traj.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(SchemaError, match=r"bad\.traj\.json.*instance_id should be a string"):
        list(MiniSweAgentReader().read(bad, bad.read_bytes()))


def test_a_value_nested_too_deeply_is_a_schema_error(tmp_path: Path) -> None:
    doc = json.loads(RUNS[0].read_text())
    deep = tmp_path / "deep.traj.json"
    deep.write_text(
        json.dumps(doc).replace(
            '"instance_id": ', '"instance_id": ' + "[" * 1000 + "1" + "]" * 1000 + ', "x": ', 1
        )
    )
    # rejected for its type (an id must be a string), at any depth and on any Python (3.12+
    # would `str()` a 1000-deep list that 3.11 cannot)
    with pytest.raises(SchemaError, match="instance_id should be a string, found array"):
        list(MiniSweAgentReader().read(deep, deep.read_bytes()))
