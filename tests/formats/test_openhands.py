"""OpenHands readers on the real files: legacy event lists, eval output.jsonl, V1 SDK events.

Expected values are walked out of the raw JSON here, independently of the readers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentlens.errors import SchemaError, TraceError
from agentlens.formats import detect, read_path
from agentlens.trajectory import ToolCategory, Trajectory
from tests.conftest import DATA, FORMATS

OH = FORMATS / "openhands"
LEGACY = sorted((OH / "legacy-replay-trajs").glob("*.json"))
RFC_OPENHANDS = (
    DATA / "formats/atif-harbor-golden/docs/rfcs/0001-trajectory-format/openhands_trajectory.json"
)
NOT_TOOL_ACTIONS = {"message", "system", "recall", "change_agent_state"}


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _response_usage(events: list[dict]) -> tuple[int, int]:
    """Sum of every distinct model response's own usage (each is repeated on calls/results)."""
    seen: dict[str, dict] = {}
    for event in events:
        response = (event.get("tool_call_metadata") or {}).get("model_response") or {}
        if response.get("id") and response.get("usage"):
            seen.setdefault(response["id"], response["usage"])
    return sum(u["prompt_tokens"] for u in seen.values()), sum(
        u["completion_tokens"] for u in seen.values()
    )


@pytest.mark.parametrize(
    ("path", "format"),
    [(p, "openhands-events") for p in [*LEGACY, RFC_OPENHANDS]]
    + [(p, "openhands-eval") for p in sorted((OH / "eval-output").glob("*.jsonl"))]
    + [(p, "openhands-eval") for p in sorted((OH / "benchmarks-v1-output").glob("*.jsonl"))]
    + [(OH / "sdk-fixtures" / "goal_events.jsonl", "openhands-v1")],
    ids=lambda v: v.name if isinstance(v, Path) else v,
)
def test_every_openhands_file_is_detected(path: Path, format: str) -> None:
    trajectories = read_path(path)
    assert trajectories
    assert {t.source.format for t in trajectories} == {format}


@pytest.mark.parametrize("path", [*LEGACY, RFC_OPENHANDS], ids=lambda p: p.name)
def test_legacy_counts_observations_and_usage(path: Path) -> None:
    events = json.loads(path.read_text())
    actions = [e for e in events if "action" in e and e["action"] not in NOT_TOOL_ACTIONS]
    results = {
        e["cause"]: e["content"] for e in events if "cause" in e and e["observation"] != "null"
    }
    (traj,) = read_path(path)
    tools = traj.tool_steps
    assert [s.raw.get("call", s.raw)["id"] for s in tools] == [a["id"] for a in actions]
    for step, action in zip(tools, actions, strict=True):
        assert step.observation == results.get(action["id"])
    usage = traj.usage_total()
    assert (usage.prompt_tokens, usage.completion_tokens) == _response_usage(events)


def test_legacy_categories_follow_the_editor_and_shell() -> None:
    (traj,) = read_path(OH / "legacy-replay-trajs" / "wrong_initial_state.json")
    assert [s.category for s in traj.tool_steps] == [
        ToolCategory.LIST_DIR,  # `view /workspace` printed a directory listing
        ToolCategory.RUN_COMMAND,
        ToolCategory.LIST_DIR,
        ToolCategory.FINISH,
    ]
    assert traj.tool_steps[1].command == "mv /workspace/game_2048.py /workspace/2048.py"


@pytest.fixture(scope="module")
def swe_bench_output() -> tuple[list[dict], list[Trajectory]]:
    path = OH / "eval-output" / "multi_swe_bench_output.jsonl"
    return _lines(path), read_path(path)


def test_eval_output_decumulates_llm_metrics(swe_bench_output) -> None:
    records, trajectories = swe_bench_output
    assert [t.task_id for t in trajectories] == [r["instance_id"] for r in records]
    for record, traj in zip(records, trajectories, strict=True):
        history = record["history"]
        actions = [e for e in history if "action" in e and e["action"] not in NOT_TOOL_ACTIONS]
        errors = [e for e in history if e.get("observation") == "error" and "cause" not in e]
        assert len(traj.tool_steps) == len(actions)  # a refused call is no tool call
        assert "error" not in {s.tool_name for s in traj.steps}
        refused = [s for s in traj.steps if s.kind == "agent" and s.is_error]
        assert [s.text for s in refused] == [e["content"] for e in errors]
        total = record["metrics"]["accumulated_token_usage"]
        usage = traj.usage_total()
        assert (usage.prompt_tokens, usage.completion_tokens) == (
            total["prompt_tokens"],
            total["completion_tokens"],
        )
        # running totals de-cumulated == each response's own usage
        assert (usage.prompt_tokens, usage.completion_tokens) == _response_usage(history)
        assert traj.reported_usage is not None
        assert traj.reported_usage.prompt_tokens == total["prompt_tokens"]
        assert traj.model == record["metadata"]["llm_config"]["model"]
        assert traj.outcome.status == "unknown"
        # editor failures are typed `edit`/`read` with ERROR: text; commands fail by exit code
        failed = set()
        for e in history:
            code = ((e.get("extras") or {}).get("metadata") or {}).get("exit_code")
            if "cause" in e and (e["content"].startswith("ERROR:") or code not in (0, -1, None)):
                failed.add(e["cause"])
        flagged = {s.raw["call"]["id"] for s in traj.tool_steps if s.is_error and "call" in s.raw}
        assert flagged == failed


def test_eval_output_per_step_usage_is_the_response_usage(swe_bench_output) -> None:
    records, trajectories = swe_bench_output
    history, traj = records[0]["history"], trajectories[0]
    for step in traj.tool_steps:
        event = step.raw.get("call", step.raw)
        response_usage = event["tool_call_metadata"]["model_response"]["usage"]
        assert step.usage is not None
        assert step.usage.prompt_tokens == response_usage["prompt_tokens"]
        assert step.usage.completion_tokens == response_usage["completion_tokens"]
    assert len(history) > len(traj.steps)


def test_resolver_output_success_and_costs() -> None:
    path = OH / "eval-output" / "resolver_mock_output.jsonl"
    records, trajectories = _lines(path), read_path(path)
    for record, traj in zip(records, trajectories, strict=True):
        assert traj.outcome.status == ("passed" if record["success"] else "failed")
        assert traj.outcome.source == "openhands-resolver"
        assert traj.cost_total() == pytest.approx(record["metrics"]["accumulated_cost"])
        assert traj.reported_cost == pytest.approx(record["metrics"]["accumulated_cost"])
        calls = [e for e in record["history"] if "action" in e and e["action"] != "message"]
        assert len(traj.tool_steps) == len(calls)
        observations = [e["content"] for e in record["history"] if "observation" in e]
        assert [s.observation for s in traj.tool_steps if s.observation is not None] == observations
        assert traj.task_id == "{owner}/{repo}#{number}".format(**record["issue"])
        cells = [e for e in record["history"] if e.get("action") == "run_ipython"]
        opened = [s for s in traj.tool_steps if s.tool_name == "run_ipython"]
        for cell, step in zip(cells, opened, strict=True):
            if cell["code"].startswith("open_file("):  # agentskills: the file is the first argument
                assert step.files == [cell["code"].split("'")[1]]
                assert step.category is ToolCategory.READ_FILE


def test_v1_history_in_eval_output() -> None:
    path = OH / "benchmarks-v1-output" / "openagentsafety_gpt-4o_output.jsonl"
    records, trajectories = _lines(path), read_path(path)
    for record, traj in zip(records, trajectories, strict=True):
        actions = [e for e in record["history"] if e["kind"] == "ActionEvent"]
        observations = {
            e["action_id"]: e["observation"]
            for e in record["history"]
            if e["kind"] == "ObservationEvent"
        }
        assert [s.call_id for s in traj.tool_steps] == [a["tool_call_id"] for a in actions]
        for step, action in zip(traj.tool_steps, actions, strict=True):
            observation = observations[action["id"]]
            assert step.observation == (observation.get("output") or observation.get("message"))
            code = (observation.get("metadata") or {}).get("exit_code")
            if isinstance(code, int) and code > 0:
                assert step.is_error
        assert traj.source.format_version == "v1-history"
        assert traj.model == record["metadata"]["llm"]["model"]


def test_v1_sdk_events_usage_and_orphan_results() -> None:
    path = OH / "sdk-fixtures" / "goal_events.jsonl"
    events = _lines(path)
    (traj,) = read_path(path)
    actions = [e for e in events if e["kind"] == "ActionEvent"]
    action_ids = {a["id"] for a in actions}
    orphans = [
        e for e in events if e["kind"] == "ObservationEvent" and e["action_id"] not in action_ids
    ]
    assert len(traj.tool_steps) == len(actions) + len(orphans)
    stats = [e["value"]["usage_to_metrics"] for e in events if e.get("key") == "stats"]
    last = stats[-1]
    prompt = sum(m["accumulated_token_usage"]["prompt_tokens"] for m in last.values())
    cached = sum(m["accumulated_token_usage"]["cache_read_tokens"] for m in last.values())
    usage = traj.usage_total()
    assert (usage.prompt_tokens, usage.cached_tokens) == (prompt, cached)
    assert traj.reported_usage == usage
    first = traj.tool_steps[0]
    assert first.is_error is True  # "Cannot execute multiple commands at once"
    assert first.observation.startswith("Cannot execute multiple commands")
    assert traj.model == "litellm_proxy/minimax-m2.7"


def test_v1_prompt_and_messages_become_steps(tmp_path: Path) -> None:
    # The fixture starts mid-run; put the SDK's opening events (shapes from its models) in front.
    system = {
        "kind": "SystemPromptEvent",
        "source": "agent",
        "tools": [],
        "system_prompt": {"type": "text", "text": "You are OpenHands agent."},
    }
    user = {
        "kind": "MessageEvent",
        "source": "user",
        "llm_message": {"role": "user", "content": [{"type": "text", "text": "Review PR 3745"}]},
    }
    path = tmp_path / "events.jsonl"
    lines = [json.dumps(system), json.dumps(user)]
    path.write_text(
        "\n".join(lines) + "\n" + (OH / "sdk-fixtures" / "goal_events.jsonl").read_text()
    )
    (traj,) = read_path(path)
    assert traj.source.format == "openhands-v1"
    assert [s.kind for s in traj.steps[:3]] == ["system", "user", "tool"]
    assert traj.task == "Review PR 3745"
    assert traj.steps[0].text == "You are OpenHands agent."


def test_v1_base_state_is_a_sidecar(tmp_path: Path) -> None:
    state = OH / "sdk-fixtures" / "v1_11_5_cli_default_base_state.json"
    with pytest.raises(TraceError, match="not a known trace format"):
        read_path(state)  # no events in it: not a trajectory
    events = [
        e for e in _lines(OH / "sdk-fixtures" / "goal_events.jsonl") if e.get("key") != "stats"
    ]
    (tmp_path / "events.jsonl").write_text("\n".join(json.dumps(e) for e in events))
    (tmp_path / "base_state.json").write_bytes(state.read_bytes())
    (traj,) = read_path(tmp_path / "events.jsonl")
    expected = json.loads(state.read_text())
    assert (traj.id, traj.model) == (expected["id"], expected["agent"]["llm"]["model"])


def test_delegate_events_become_a_subtrajectory(tmp_path: Path) -> None:
    # No shipped file has a delegation; wrap a real event list the way OpenHands streams one.
    inner = json.loads((OH / "legacy-replay-trajs" / "wrong_initial_state.json").read_text())[1:]
    delegate = {
        "id": 1000,
        "source": "agent",
        "action": "delegate",
        "args": {"agent": "BrowsingAgent", "inputs": {"task": "rename the file"}, "thought": ""},
    }
    done = {
        "id": 1001,
        "source": "agent",
        "cause": 1000,
        "observation": "delegate",
        "content": "ok",
    }
    path = tmp_path / "delegated.json"
    path.write_text(json.dumps([json.loads(LEGACY[0].read_text())[0], delegate, *inner, done]))
    (traj,) = read_path(path)
    (sub,) = traj.subtrajectories
    (call,) = traj.tool_steps
    assert call.subtrajectory == sub.id and call.observation == "ok"
    assert sub.parent_id == traj.id and sub.agent.name == "BrowsingAgent"
    assert len(sub.tool_steps) == sum(1 for e in inner if "action" in e)


def test_wrong_shape_and_bad_json_are_named(tmp_path: Path) -> None:
    wrong = tmp_path / "events.json"
    wrong.write_text('[{"id": 0, "source": "user", "action": "message", "args": {}}, 5]')
    with pytest.raises(SchemaError, match="event 1 should be an object"):
        read_path(wrong, format="openhands-events")
    no_history = tmp_path / "output.jsonl"
    no_history.write_text('{"instance_id": "x", "instruction": "y", "history": {}}\n')
    with pytest.raises(SchemaError, match="line 1 has no 'history' list"):
        read_path(no_history)
    events = (OH / "sdk-fixtures" / "goal_events.jsonl").read_bytes()
    broken = tmp_path / "broken.jsonl"  # cut, then written on: a broken line, not a cut one
    broken.write_bytes(events[:-200] + b"\n" + events[-200:])
    with pytest.raises(TraceError, match="invalid JSON on line"):
        read_path(broken)
    not_events = tmp_path / "plain.jsonl"
    not_events.write_text('{"kind": "ActionEvent"}\n[1, 2]\n')
    with pytest.raises(SchemaError, match="line 2 is not an SDK event"):
        read_path(not_events, format="openhands-v1")


@pytest.mark.parametrize("shape", ["one record", "a list"])
def test_eval_records_saved_as_pretty_printed_json_are_read(tmp_path: Path, shape: str) -> None:
    source = OH / "eval-output" / "multi_swe_bench_output.jsonl"
    records = _lines(source)
    doc = records[0] if shape == "one record" else records
    path = tmp_path / "multi_swe_bench_output.json"
    path.write_text(json.dumps(doc, indent=2))
    assert detect(path, path.read_bytes()[:65536]).name == "openhands-eval"
    expected = read_path(source)[: 1 if shape == "one record" else None]
    got = read_path(path)
    assert [t.task_id for t in got] == [t.task_id for t in expected]
    for mine, theirs in zip(got, expected, strict=True):
        assert [(s.kind, s.tool_name, s.command, s.observation) for s in mine.steps] == [
            (s.kind, s.tool_name, s.command, s.observation) for s in theirs.steps
        ]
        assert mine.usage_total() == theirs.usage_total()
