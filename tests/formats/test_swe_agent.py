"""SWE-agent `.traj` reader on the real runs: the 25 SWE-bench-java runs are checked against the
table in trace-formats.md §1.1, the other files against their own raw JSON."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from agentlens.errors import SchemaError, TraceError
from agentlens.formats import read_path, read_paths
from agentlens.trajectory import ToolCategory
from tests.conftest import DATA, FORMATS

JAVA = DATA / "swe-agent-java"
DOC = DATA.parent / "docs" / "trace-formats.md"
OTHER_TRAJS = sorted((FORMATS / "swe-agent").glob("*.traj"))


def _table_rows() -> list[tuple[str, str, str, int, float, int]]:
    """(task, model, verdict, steps, instance_cost, tokens_sent) from §1.1 of the format spec."""
    section = DOC.read_text().split("### 1.1", 1)[1].split("###", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 9 and re.fullmatch(r"\d+", cells[5]):
            task, model, verdict = cells[0], cells[1], cells[2]
            rows.append((task, model, verdict, int(cells[5]), float(cells[6]), int(cells[7])))
    return rows


ROWS = _table_rows()


def test_the_table_has_all_25_runs() -> None:
    assert len(ROWS) == 25


@pytest.mark.parametrize(
    ("task", "model", "verdict", "steps", "cost", "tokens_sent"),
    ROWS,
    ids=[f"{r[1]}-{r[0]}" for r in ROWS],
)
def test_java_runs_match_the_spec_table(
    task: str, model: str, verdict: str, steps: int, cost: float, tokens_sent: int
) -> None:
    (run_dir,) = [d for d in JAVA.iterdir() if d.name.endswith(f"SWE-agent_{model}")]
    # + sidecar verdicts; the table's "(no log) → fail" counts an empty patch as failed
    (traj,) = read_paths([run_dir / "trajs" / f"{task}.traj"], unevaluated="failed").trajectories
    assert traj.source.format == "swe-agent"
    assert traj.task_id == task
    assert traj.model == model
    assert len(traj.tool_steps) == steps
    assert traj.reported_cost == pytest.approx(cost, abs=0.0006)  # the table rounds to 3 places
    assert traj.reported_usage is not None
    assert traj.reported_usage.prompt_tokens == tokens_sent
    assert traj.outcome.status == ("passed" if "True" in verdict else "failed")
    assert traj.outcome.source == (
        "run_instance.log" if "no log" not in verdict else "results.json"
    )


def test_the_reader_alone_makes_no_verdict() -> None:
    path = (
        JAVA
        / "20240825_SWE-agent_deepseek-chat-v2"
        / "trajs"
        / "fasterxml__jackson-databind-4486.traj"
    )
    (traj,) = read_path(path)
    assert traj.outcome.status == "unknown"  # the verdict lives beside trajs/, not in the file


def test_instance_cost_not_batch_total() -> None:
    path = (
        JAVA
        / "20240825_SWE-agent_gpt-4o-2024-05-13"
        / "trajs"
        / "fasterxml__jackson-databind-4486.traj"
    )
    stats = json.loads(path.read_text())["info"]["model_stats"]
    (traj,) = read_path(path)
    assert traj.reported_cost == stats["instance_cost"] != stats["total_cost"]


@pytest.mark.parametrize("path", OTHER_TRAJS, ids=lambda p: p.name[:60])
def test_every_traj_file_reads_with_its_observations(path: Path) -> None:
    doc = json.loads(path.read_text())
    (traj,) = read_path(path)
    assert traj.source.format == "swe-agent"
    assert traj.task_id == path.name.removesuffix(".traj")
    entries = doc.get("trajectory") or []
    if entries:
        acted = [e for e in entries if e["action"].strip()]
        assert [s.observation for s in traj.tool_steps] == [e["observation"] for e in acted]
        state = entries[0]["state"]
        expected = "v0-string-state" if isinstance(state, str) else "v1-dict-state"
        assert traj.source.format_version == expected
    else:
        calls = [m for m in doc["history"] if m.get("tool_calls")]
        assert len(traj.tool_steps) == len(calls)
    assert traj.task == _first_task_message(doc["history"])


def _first_task_message(history: list[dict[str, object]]) -> object:
    """The first user message that is not a replayed demonstration (`is_demo`)."""
    return next(m["content"] for m in history if m["role"] == "user" and not m.get("is_demo"))


JAVA_TRAJS = sorted(JAVA.glob("*/trajs/*.traj"))
DEMO_TRAJS = [p for p in [*JAVA_TRAJS, *OTHER_TRAJS] if '"is_demo": true' in p.read_text()]


def test_real_runs_with_a_demonstration_are_found() -> None:
    assert len(DEMO_TRAJS) >= 20  # every SWE-bench-java run, and two of the other files


@pytest.mark.parametrize("path", DEMO_TRAJS, ids=lambda p: f"{p.parent.parent.name}-{p.name}"[-70:])
def test_the_task_is_the_issue_not_the_demonstration(path: Path) -> None:
    """SWE-agent sends a worked demonstration (`is_demo: true`, another task's issue) before the
    real issue; the demonstration is part of the harness's prompt, so it is a system step and
    the task is the issue the agent was asked to solve."""
    history = json.loads(path.read_text())["history"]
    (traj,) = read_path(path)
    assert traj.task == _first_task_message(history)
    assert traj.task is not None and "DEMONSTRATION" not in traj.task
    demos = [m["content"] for m in history if m.get("is_demo")]
    assert [s.text for s in traj.steps if s.kind == "system"][1:] == demos


def test_function_calling_arguments_come_from_the_tool_calls() -> None:
    path = FORMATS / "swe-agent" / "function_calling_simple.traj"
    history = json.loads(path.read_text())["history"]
    calls = [m["tool_calls"][0] for m in history if m.get("tool_calls")]
    results = {m["tool_call_ids"][0]: m["content"] for m in history if m["role"] == "tool"}
    (traj,) = read_path(path)
    assert traj.source.format_version == "history-only"
    for step, call in zip(traj.tool_steps, calls, strict=True):
        assert step.tool_name == call["function"]["name"]
        assert step.arguments == json.loads(call["function"]["arguments"])
        assert step.observation == results[call["id"]]
    assert [s.category for s in traj.tool_steps] == [
        ToolCategory.SEARCH,  # find_file
        ToolCategory.READ_FILE,  # open
        ToolCategory.EDIT,
        ToolCategory.RUN_COMMAND,  # python tests/missing_colon.py
        ToolCategory.FINISH,  # submit
    ]


@pytest.mark.parametrize(
    "data, error, message",
    [
        (
            b'{"trajectory": [{"action": "ls"}, 3], "history": []}',
            SchemaError,
            "trajectory entry 1 should be a dict",
        ),
        (
            b'{"environment": "main", "trajectory": [], "history": []}',
            SchemaError,
            "neither 'trajectory' nor 'history'",
        ),
        (OTHER_TRAJS[0].read_bytes()[:5000], TraceError, "truncated"),
    ],
    ids=["entry not a dict", "no steps", "truncated"],
)
def test_wrong_shape_and_bad_json_are_named(
    read_error: Callable[[str, bytes], TraceError], data: bytes, error: type, message: str
) -> None:
    found = read_error("x.traj", data)
    assert isinstance(found, error) and message in str(found)


def test_files_follow_the_aci_operands_and_the_open_file() -> None:
    path = (
        JAVA
        / "20240825_SWE-agent_gpt-4o-2024-05-13"
        / "trajs"
        / "fasterxml__jackson-databind-4486.traj"
    )
    entries = json.loads(path.read_text())["trajectory"]
    (traj,) = read_path(path)
    checked = 0
    for entry, step in zip(entries, traj.tool_steps, strict=True):
        verb, _, rest = entry["action"].partition(" ")
        if verb in ("open", "create"):
            assert step.files == [rest.split()[0].strip('"')]
            checked += 1
        elif verb == "edit":
            assert step.files == [json.loads(entry["state"])["open_file"]]
            checked += 1
    assert checked >= 10


def test_retry_loop_attempts(tmp_path: Path) -> None:
    # SWE-agent's retry loop writes {"attempts": [...]} plus the chosen attempt merged on top
    # (sweagent/agent/agents.py, RetryAgent.get_trajectory_data); build one from two real runs.
    runs = sorted((JAVA / "20240825_SWE-agent_deepseek-coder-v2" / "trajs").glob("*.traj"))[:2]
    attempts = [json.loads(p.read_text()) for p in runs]
    chosen = {**attempts[1], "info": {**attempts[1]["info"], "best_attempt_idx": 1}}
    merged, unmerged = tmp_path / "a.traj", tmp_path / "b.traj"
    merged.write_text(json.dumps({"attempts": attempts, **chosen}))
    unmerged.write_text(json.dumps({"attempts": attempts}))
    (best,) = read_path(merged)
    (last,) = read_path(unmerged)
    assert len(best.tool_steps) == len(last.tool_steps) == len(attempts[1]["trajectory"])
    assert best.metadata["best_attempt_idx"] == 1


def _edited(tmp_path: Path, name: str, edit: object) -> Path:
    doc = json.loads(OTHER_TRAJS[0].read_text())
    edit(doc)  # type: ignore[operator]
    out = tmp_path / name
    out.write_text(json.dumps(doc))
    return out


def test_odd_shapes_and_bytes(tmp_path: Path) -> None:
    (original,) = read_path(OTHER_TRAJS[0])
    # a non-object history message is skipped by the generic reading, as before
    odd = _edited(tmp_path, "odd.traj", lambda d: d["history"].append(7))
    (traj,) = read_path(odd)
    assert [s.command for s in traj.steps] == [s.command for s in original.steps]
    # non-ASCII text (valid UTF-8) reads alike
    accented = _edited(
        tmp_path, "accented.traj", lambda d: d["trajectory"][0].update(thought="café ✓")
    )
    accented.write_bytes(accented.read_text().encode())
    (traj,) = read_path(accented)
    assert next(s for s in traj.steps if s.kind == "tool").text == "café ✓"
    # invalid UTF-8 in a history field the reader never reads is still invalid JSON
    broken = _edited(tmp_path, "broken.traj", lambda d: d["history"][0].update(note="MARK"))
    broken.write_bytes(broken.read_bytes().replace(b"MARK", b"\xff\xfe"))
    with pytest.raises(TraceError, match="invalid JSON"):
        read_path(broken)
    # a history that is not a list is named, as before
    wrong = _edited(tmp_path, "wrong.traj", lambda d: d.update(history={"a": 1}))
    with pytest.raises(SchemaError, match="'history' should be a list"):
        read_path(wrong)


def test_a_value_of_the_wrong_type_is_a_schema_error(tmp_path: Path) -> None:
    from agentlens.formats.swe_agent import SweAgentReader

    bad = _edited(
        tmp_path, "bad.traj", lambda d: d["info"].update(model_stats={"tokens_sent": [1]})
    )
    with pytest.raises(SchemaError, match=r"bad\.traj.*unexpected type"):
        list(SweAgentReader().read(bad, bad.read_bytes()))


CURRENT_DIR = re.compile(r"\(Current directory: (/[^)\n]*)\)")


def _shown_starts(doc: dict) -> list[str | None]:
    """Where each action started, as SWE-agent's prompt showed it: the last `(Current directory:
    X)` the agent read before it (the demonstration left out). Independent of `state`."""
    where, starts = None, []
    for message in doc.get("history") or []:
        if message.get("is_demo"):
            continue
        text = message["content"]
        if message["role"] == "assistant":
            starts.append(where)
        elif found := CURRENT_DIR.findall(text if isinstance(text, str) else json.dumps(text)):
            where = found[-1]
    return starts


@pytest.mark.parametrize(
    "path", [*sorted(JAVA.glob("*/trajs/*.traj")), *OTHER_TRAJS], ids=lambda p: p.stem[-40:]
)
def test_each_step_starts_where_the_prompt_said_it_was(path: Path) -> None:
    """`Step.cwd` is the directory an action started in (a 2024 file's string `state` was taken
    before the action, a later file's object `state` after it): checked against the prompt the
    agent read, never against `state`. A step whose start is unknown may say None."""
    doc = json.loads(path.read_bytes())
    entries = doc.get("trajectory") or []
    (traj,) = read_path(path)
    steps = traj.tool_steps if entries else []
    assert len(steps) == sum(1 for e in entries if e["action"].strip())
    shown = _shown_starts(doc)
    if len(shown) != len(steps):  # a history that is not one message per action says nothing
        return
    wrong = [(s.cwd, w) for s, w in zip(steps, shown, strict=True) if s.cwd and s.cwd != w]
    assert wrong == []


def test_a_run_that_cds_below_the_root_names_files_from_there() -> None:
    path = (
        JAVA
        / "20240825_SWE-agent_deepseek-chat-v2"
        / "trajs"
        / "fasterxml__jackson-databind-3701.traj"
    )
    (traj,) = read_path(path)
    opened = next(s for s in traj.tool_steps if s.command == "open NodeCursor.java 198")
    assert opened.files == ["NodeCursor.java"]
    assert (
        opened.cwd
        == "/fasterxml__jackson-databind/src/main/java/com/fasterxml/jackson/databind/node"
    )
