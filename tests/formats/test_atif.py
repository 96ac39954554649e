from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from agentlens.errors import SchemaError
from agentlens.formats import detect, read_path, read_paths
from agentlens.formats.atif import AtifReader
from agentlens.formats.atif_schema import validate
from tests.conftest import FORMATS

GOLDEN = sorted((FORMATS / "atif-harbor-golden" / "tests" / "golden").glob("*/*.trajectory*.json"))
TRACES = sorted((FORMATS / "atif-harbor-golden" / "tests" / "golden").glob("*/*.traces.json"))
OPENAGENTS = FORMATS / "atif-like-openagents" / "trajectory.json"


def _head(path: Path) -> bytes:
    return path.read_bytes()[:65536]


def test_golden_files_are_all_found() -> None:
    assert len(GOLDEN) == 10


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.name)
def test_golden_counts_match_the_raw_json(path: Path) -> None:
    raw = json.loads(path.read_bytes())
    assert detect(path, _head(path)).name == "atif"
    assert validate(raw) == []
    (traj,) = read_path(path)
    steps = [s for s in raw["steps"] if not s.get("is_copied_context")]
    calls = [c for s in steps for c in s.get("tool_calls") or []]
    assert len(traj.steps) == sum(max(1, len(s.get("tool_calls") or [])) for s in steps)
    assert [s.call_id for s in traj.tool_steps] == [c["tool_call_id"] for c in calls]
    assert [s.tool_name for s in traj.tool_steps] == [c["function_name"] for c in calls]
    metrics = [s["metrics"] for s in steps if "metrics" in s]
    usage = traj.usage_total()
    assert usage.prompt_tokens == sum(m.get("prompt_tokens", 0) for m in metrics)
    assert usage.completion_tokens == sum(m.get("completion_tokens", 0) for m in metrics)
    assert traj.cost_total() == pytest.approx(sum(m.get("cost_usd", 0) for m in metrics))
    final = raw["final_metrics"]
    assert traj.reported_usage is not None
    assert traj.reported_usage.prompt_tokens == final["total_prompt_tokens"]
    assert traj.model == raw["agent"].get("model_name")
    assert traj.source.format_version == raw["schema_version"]
    copied = [s["step_id"] for s in raw["steps"] if s.get("is_copied_context")]
    assert traj.metadata.get("copied_context_step_ids", []) == copied
    first_user = next(s["message"] for s in raw["steps"] if s["source"] == "user")
    assert traj.task == first_user


def test_observations_follow_source_call_id() -> None:
    path = FORMATS / "atif-harbor-golden/tests/golden/openhands/hello-world.trajectory.json"
    raw = json.loads(path.read_bytes())
    results = {
        r["source_call_id"]: r["content"]
        for s in raw["steps"]
        for r in (s.get("observation") or {}).get("results", [])
    }
    (traj,) = read_path(path)
    linked = {s.call_id: s.observation for s in traj.tool_steps if s.call_id in results}
    assert linked == results
    editor = next(s for s in traj.tool_steps if s.tool_name == "str_replace_editor")
    assert editor.category == "create_file"
    assert editor.files == [editor.arguments["path"]]


def test_terminus_parallel_calls_share_a_turn_and_get_the_screen() -> None:
    path = (
        FORMATS / "atif-harbor-golden/tests/golden/terminus_2/hello-world-timeout.trajectory.json"
    )
    raw = json.loads(path.read_bytes())
    (traj,) = read_path(path)
    screens = 0
    for step in raw["steps"]:
        calls = step.get("tool_calls") or []
        mine = [s for s in traj.tool_steps if s.turn == step["step_id"]]
        assert len(mine) == len(calls)
        contents = [r["content"] for r in (step.get("observation") or {}).get("results", [])]
        if calls and contents:
            assert "\n".join(contents) in {s.observation for s in mine}
            screens += 1
    assert screens > 0
    assert all(s.command == s.arguments["keystrokes"] for s in traj.tool_steps)


def test_validator_names_what_is_wrong() -> None:
    raw = json.loads(GOLDEN[0].read_bytes())
    broken = copy.deepcopy(raw)
    broken["steps"][1]["step_id"] = 7
    broken["steps"][0]["surprise"] = 1
    del broken["agent"]["version"]
    problems = validate(broken)
    assert any("steps[1].step_id" in p for p in problems)
    assert any("surprise" in p for p in problems)
    assert any("agent.version" in p for p in problems)


@pytest.mark.parametrize("asked", [{"format": "atif"}, {"strict": True}], ids=str)
def test_look_alike_is_rejected_when_atif_is_asked_for(asked: dict[str, Any]) -> None:
    assert detect(OPENAGENTS, _head(OPENAGENTS)).name == "atif"
    with pytest.raises(SchemaError) as info:
        read_path(OPENAGENTS, **asked)
    message = str(info.value)
    assert "schema_version: '1.4'" in message and "--lenient" in message
    assert "trajectory.json" in message


def test_detected_look_alike_is_read_with_one_warning() -> None:
    result = read_paths([OPENAGENTS.parent])
    assert [t.source.path for t in result.trajectories] == [str(OPENAGENTS)]
    assert not result.failures
    (line,) = result.warnings
    assert line.startswith(f"{OPENAGENTS}: not conformant ATIF, read best-effort: ")
    assert "schema_version: '1.4'" in line and "more)" in line
    strict = read_paths([OPENAGENTS.parent], strict=True)
    assert not strict.trajectories and [f.path for f in strict.failures] == [str(OPENAGENTS)]


def test_look_alike_reads_leniently() -> None:
    raw = json.loads(OPENAGENTS.read_bytes())
    calls = [c for s in raw["steps"] for c in s.get("tool_calls") or []]
    results = {
        s["message"].removeprefix("Tool result for "): s["observation"]
        for s in raw["steps"]
        if str(s.get("message", "")).startswith("Tool result for ")
    }
    (traj,) = read_path(OPENAGENTS, lenient=True)
    assert [s.call_id for s in traj.tool_steps] == [c["id"] for c in calls]
    for step in traj.tool_steps:
        assert step.observation == results[step.call_id]["content"]
        assert step.is_error == (results[step.call_id]["result"]["success"] is False)
    assert traj.model == raw["agent"]["model"]
    assert traj.metadata["schema_problems"]
    assert traj.outcome.status == "unknown"  # extra.success is self-reported, not a verdict


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_training_traces_are_not_atif(path: Path) -> None:
    assert not AtifReader.handles_bytes(_head(path))


def test_harbor_trial_result_gives_the_outcome(tmp_path: Path) -> None:
    trial = tmp_path / "hello-world__abc"
    (trial / "agent").mkdir(parents=True)
    (trial / "agent" / "trajectory.json").write_bytes(GOLDEN[0].read_bytes())
    result = {"task_name": "hello-world", "verifier_result": {"rewards": {"reward": 0.0}}}
    (trial / "result.json").write_text(json.dumps(result))
    (traj,) = read_path(trial / "agent" / "trajectory.json")
    assert traj.outcome.status == "failed"
    assert traj.outcome.source == "harbor-result.json"
    assert traj.task_id == "hello-world"


def test_summarization_sub_agents_are_loaded_from_sibling_files() -> None:
    folder = FORMATS / "atif-harbor-golden/tests/golden/terminus_2"
    path = folder / "hello-world-context-summarization.trajectory.json"
    raw = json.loads(path.read_bytes())
    refs = [
        ref
        for s in raw["steps"]
        for r in (s.get("observation") or {}).get("results", [])
        for ref in r.get("subagent_trajectory_ref") or []
    ]
    assert len(refs) == 3
    (traj,) = read_path(path)
    assert [s.id for s in traj.subtrajectories] == [ref["session_id"] for ref in refs]
    for sub, ref in zip(traj.subtrajectories, refs, strict=True):
        sub_raw = json.loads(
            (folder / f"hello-world-context-summarization.{ref['trajectory_path']}").read_bytes()
        )
        assert sub.parent_id == traj.id == sub_raw["agent"]["extra"]["parent_session_id"]
        kept = [s for s in sub_raw["steps"] if not s.get("is_copied_context")]
        assert len(sub.steps) == sum(max(1, len(s.get("tool_calls") or [])) for s in kept)
    assert refs[0]["session_id"] in {s.subtrajectory for s in traj.steps}


def test_refs_never_leave_the_folder(tmp_path: Path) -> None:
    raw = json.loads(GOLDEN[0].read_bytes())
    raw["steps"][-1]["observation"] = {
        "results": [
            {"subagent_trajectory_ref": [{"session_id": "x", "trajectory_path": "../t.json"}]}
        ]
    }
    (tmp_path / "t.json").write_bytes(GOLDEN[0].read_bytes())
    inner = tmp_path / "run"
    inner.mkdir()
    (inner / "trajectory.json").write_text(json.dumps(raw))
    (traj,) = read_path(inner / "trajectory.json")
    assert traj.subtrajectories == []


def test_a_parent_rewritten_in_the_same_process_is_read_again(tmp_path: Path) -> None:
    """Whether a parent names a sub-agent file was cached by path alone: a long process (a
    watcher, the MCP server) kept the first answer after the parent was rewritten."""
    from agentlens.formats.atif import referrer_of

    folder = FORMATS / "atif-harbor-golden/tests/golden/terminus_2"
    stem = "hello-world-context-summarization"
    parent, sub = tmp_path / f"{stem}.trajectory.json", tmp_path / f"{stem}.trajectory.x.json"
    raw = json.loads((folder / f"{stem}.trajectory.json").read_bytes())
    sub.write_bytes((folder / f"{stem}.trajectory.summarization-1-summary.json").read_bytes())
    parent.write_text(json.dumps(raw))
    assert referrer_of(sub) is None  # the golden parent names other files
    ref = next(
        r for s in raw["steps"] for o in (s.get("observation") or {}).get("results", [])
        for r in o.get("subagent_trajectory_ref") or []
    )  # fmt: skip
    ref["trajectory_path"] = sub.name.removeprefix(f"{stem}.")
    parent.write_text(json.dumps(raw))
    assert referrer_of(sub) == parent
