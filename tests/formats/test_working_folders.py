"""`Step.cwd` from every format whose real files record a working folder, so a file named
relative to it and by its full path is one file (`shell/working_dir.py`); and a folder value that
is hostile text is ignored, never a crash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentlens.formats import _openhands_common as oh
from agentlens.formats import read_path
from agentlens.formats.jsonl import dump_jsonl
from agentlens.shell.working_dir import norm_path, repo_files, step_paths
from agentlens.trajectory import Step, Trajectory
from tests.conftest import DATA, FORMATS

SPOTTER = FORMATS / "claude-code" / "marot-spotter" / "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
MONOREPO = FORMATS / "claude-code" / "jnarowski-agentcmd" / "full-session-four.jsonl"
CODEX = (
    FORMATS
    / "codex"
    / "jnarowski-agentcmd"
    / "full"
    / "rollout-2025-09-25T08-02-05-0199812e-64f0-7f73-91fc-095dda01c36e.jsonl"
)
SWEBV = sorted((DATA / "mini-swe-agent-swebv" / "trajs").glob("*/*.traj.json"))
MULTI_SWE = FORMATS / "openhands" / "eval-output" / "multi_swe_bench_output.jsonl"
SAFETY = FORMATS / "openhands" / "benchmarks-v1-output" / "openagentsafety_gpt-4o_output.jsonl"
COPILOT = FORMATS / "copilot-cli" / "events.jsonl"
GROK = FORMATS / "grok-cli" / "updates.jsonl"
PONY = "/workspace/ponylang__ponyc__0.1"


def _one(path: Path) -> Trajectory:
    (trajectory,) = read_path(path)
    return trajectory


def _step(trajectory: Trajectory, command: str) -> Step:
    return next(s for s in trajectory.tool_steps if s.command == command)


def test_a_claude_code_bash_call_names_the_file_its_edits_name() -> None:
    """`git add -f priv/static/assets/spotter.css` runs in the line's `cwd`; the session's
    Write names the same file by its full path."""
    session = _one(SPOTTER)
    root = "/home/USER/projects/spotter-worktrees/spotter-dov"
    added = _step(session, "git add -f priv/static/assets/spotter.css")
    assert added.cwd == root
    written = {f for s in session.tool_steps if s.tool_name in ("Write", "Edit") for f in s.files}
    assert step_paths(added) == [f"{root}/priv/static/assets/spotter.css"]
    assert step_paths(added)[0] in written


def test_a_claude_code_call_starts_where_the_last_cd_left_the_shell() -> None:
    """`cd apps/app && pnpm test …` moves the Bash tool's folder: the lines after it say so."""
    session = _one(MONOREPO)
    root = "/Users/jnarowski/Dev/sourceborn/src/agent-workflows-monorepo-v2"
    tested = [
        s for s in session.tool_steps if s.command == "cd apps/app && pnpm test NavUser.test.tsx"
    ]
    assert [s.cwd for s in tested] == [root, root]
    assert step_paths(tested[-1]) == [f"{root}/apps/app/NavUser.test.tsx"]
    after = session.tool_steps[session.tool_steps.index(tested[-1]) + 1 :]
    assert after and {s.cwd for s in after} == {f"{root}/apps/app"}


def test_a_codex_call_starts_in_its_workdir() -> None:
    """`shell` calls name `workdir` (absolute, or `.`: the turn's folder); `cat package.json` in
    `apps/spectora-labs` is that app's file, not the monorepo's."""
    rollout = _one(CODEX)
    root = "/Users/jnarowski/Dev/spectora/src/spectora-labs-monorepo-v2"
    app = f"{root}/apps/spectora-labs"
    assert _step(rollout, "cat package.json").cwd == app
    assert step_paths(_step(rollout, "cat package.json")) == [f"{app}/package.json"]
    named = [(s.arguments.get("workdir"), s.cwd) for s in rollout.tool_steps]
    assert {cwd for workdir, cwd in named if workdir == "."} == {root}
    assert sum(1 for _, cwd in named if cwd == app) == 35


def test_every_mini_swe_agent_command_starts_in_the_environment_folder() -> None:
    """mini-swe-agent runs each command as a new process in `environment.cwd` (`/testbed`)."""
    assert len(SWEBV) == 6  # the data README's count: a moved folder must not pass unread
    for path in SWEBV:
        steps = _one(path).tool_steps
        assert steps and {s.cwd for s in steps} == {"/testbed"}, path.name


def test_an_openhands_command_starts_where_the_command_before_left_its_shell() -> None:
    """Each result's `metadata.working_dir` is the folder after the command: `ls src` runs in
    the checkout the first `ls` (no `cd`) ended in, and `cd /workspace && …` moves the next."""
    runs = {r.task_id: r for r in read_path(MULTI_SWE)}
    listed = _step(runs["ponylang__ponyc-4593"], "ls src")
    assert listed.cwd == PONY
    assert repo_files(listed) == [norm_path(f"{PONY}/src")]
    built = runs["ponylang__ponyc-4595"]
    make = _step(built, f"cd {PONY} && make")
    assert make.cwd == "/workspace"
    assert _step(built, "make clean && make").cwd == PONY


def test_an_openhands_sdk_command_starts_in_the_reported_folder() -> None:
    runs = read_path(SAFETY)
    folders = {s.cwd for r in runs for s in r.tool_steps if s.command}
    assert folders == {"/workspace"}


def test_a_copilot_cli_call_starts_in_the_session_folder() -> None:
    steps = _one(COPILOT).tool_steps
    assert {s.cwd for s in steps} == {"/home/wei/repo/VibeCodingTracker"}


def test_a_grok_read_names_the_file_the_tool_says_it_read() -> None:
    """`read_file src/main.rs` in `info.cwd`: the tool's own output says
    `/workspace/demo/src/main.rs`."""
    updates = [json.loads(line)["params"]["update"] for line in GROK.read_text().splitlines()]
    output = next(
        u["rawOutput"] for u in updates if u.get("toolCallId") == "read-1" and "rawOutput" in u
    )
    read = next(s for s in _one(GROK).tool_steps if s.call_id == "read-1")
    assert read.cwd == "/workspace/demo"
    assert step_paths(read) == [output["FileContent"]["absolute_path"]]


HOSTILE: list[Any] = [
    "relative/dir",
    "../../etc",
    "C:\\Users\\me",
    "/repo\x00/x",
    "/repo\n/x",
    "/" + "a" * 5000,
    7,
    None,
    ["/repo"],
    {"path": "/repo"},
    "",
]
IDS = [repr(value)[:16] for value in HOSTILE]


def _rewrite_jsonl(source: Path, target: Path, change: Any) -> Path:
    lines = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    target.write_text("\n".join(json.dumps(change(line)) for line in lines) + "\n")
    return target


def _claude(line: dict[str, Any], value: Any) -> dict[str, Any]:
    return {**line, "cwd": value} if "cwd" in line else line


def _codex(line: dict[str, Any], value: Any) -> dict[str, Any]:
    payload = line.get("payload")
    if isinstance(payload, dict) and "cwd" in payload:
        line["payload"] = {**payload, "cwd": value}
    elif isinstance(payload, dict) and payload.get("name") == "shell":
        arguments = json.loads(payload["arguments"])
        payload["arguments"] = json.dumps({**arguments, "workdir": value})
    return line


@pytest.mark.parametrize("value", HOSTILE, ids=IDS)
def test_a_hostile_claude_code_cwd_is_ignored(tmp_path: Path, value: Any) -> None:
    path = _rewrite_jsonl(MONOREPO, tmp_path / "s.jsonl", lambda line: _claude(line, value))
    assert {s.cwd for s in _one(path).tool_steps} == {None}


@pytest.mark.parametrize("value", HOSTILE, ids=IDS)
def test_a_hostile_codex_folder_or_workdir_is_ignored(tmp_path: Path, value: Any) -> None:
    path = _rewrite_jsonl(CODEX, tmp_path / "rollout-x.jsonl", lambda line: _codex(line, value))
    steps = _one(path).tool_steps
    assert steps and {s.cwd for s in steps} == {None}


@pytest.mark.parametrize("value", HOSTILE, ids=IDS)
def test_a_hostile_mini_swe_agent_cwd_is_ignored(tmp_path: Path, value: Any) -> None:
    doc = json.loads(SWEBV[0].read_text())
    doc["info"]["config"]["environment"]["cwd"] = value
    path = tmp_path / SWEBV[0].name
    path.write_text(json.dumps(doc))
    assert {s.cwd for s in _one(path).tool_steps} == {None}


@pytest.mark.parametrize("value", HOSTILE, ids=IDS)
def test_a_hostile_openhands_working_dir_is_ignored(tmp_path: Path, value: Any) -> None:
    def change(run: dict[str, Any]) -> dict[str, Any]:
        for event in run["history"]:
            metadata = (event.get("extras") or {}).get("metadata")
            if isinstance(metadata, dict):
                metadata["working_dir"] = value
        return run

    path = _rewrite_jsonl(MULTI_SWE, tmp_path / "output.jsonl", change)
    assert {s.cwd for r in read_path(path) for s in r.tool_steps} == {None}


def test_a_folder_with_dot_dot_steps_is_collapsed(tmp_path: Path) -> None:
    path = _rewrite_jsonl(MONOREPO, tmp_path / "s.jsonl", lambda line: _claude(line, "/a/b/../c"))
    assert {s.cwd for s in _one(path).tool_steps} == {"/a/c"}


def test_after_a_copilot_cli_cd_later_calls_have_no_folder(tmp_path: Path) -> None:
    """Copilot CLI's bash stays open between calls: after `cd .github` the log does not say
    where a call starts, so it is left unset rather than guessed."""

    def change(event: dict[str, Any]) -> dict[str, Any]:
        for request in (event.get("data") or {}).get("toolRequests") or []:
            if request["name"] == "bash":
                request["arguments"]["command"] = "cd .github && " + request["arguments"]["command"]
        return event

    steps = _one(_rewrite_jsonl(COPILOT, tmp_path / "events.jsonl", change)).tool_steps
    first = next(i for i, s in enumerate(steps) if s.tool_name == "bash")
    assert {s.cwd for s in steps[: first + 1]} == {"/home/wei/repo/VibeCodingTracker"}
    assert {s.cwd for s in steps[first + 1 :]} == {None}


SWE_AGENT = (
    FORMATS
    / "swe-agent"
    / "replay__marshmallow-code__marshmallow-1867__function_calling__install-1__marshmallow-code__marshmallow-1867.traj"
)


@pytest.mark.parametrize("value", HOSTILE, ids=IDS)
def test_a_hostile_swe_agent_working_dir_is_ignored(tmp_path: Path, value: Any) -> None:
    doc = json.loads(SWE_AGENT.read_text())
    for entry in doc["trajectory"]:
        entry["state"]["working_dir"] = value
    path = tmp_path / SWE_AGENT.name
    path.write_text(json.dumps(doc))
    steps = _one(path).tool_steps
    assert steps and {s.cwd for s in steps} == {None}


@pytest.mark.parametrize(
    "value", [v for v in HOSTILE if isinstance(v, str)], ids=lambda v: repr(v)[:16]
)
def test_a_canonical_file_keeps_no_hostile_cwd(tmp_path: Path, value: str) -> None:
    """The canonical JSONL is input too: a `cwd` another tool wrote there is checked alike."""
    trajectory = _one(COPILOT)
    for step in trajectory.tool_steps:
        step.cwd = value
    path = tmp_path / "runs.jsonl"
    dump_jsonl([trajectory], path)
    assert {s.cwd for s in _one(path).tool_steps} == {None}


@pytest.mark.parametrize("value", HOSTILE, ids=IDS)
def test_a_hostile_session_folder_is_ignored(tmp_path: Path, value: Any) -> None:
    def change(event: dict[str, Any]) -> dict[str, Any]:
        if event.get("type") == "session.start":
            event["data"]["context"]["cwd"] = value
        return event

    steps = _one(_rewrite_jsonl(COPILOT, tmp_path / "events.jsonl", change)).tool_steps
    assert steps and {s.cwd for s in steps} == {None}


def test_an_openhands_cd_to_where_the_first_result_ends_is_a_move() -> None:
    """Before the first result that names a folder, a call that `cd`s there proves nothing of
    where the shell began: `ls src` before `cat setup.py; cd /workspace/repo` gets no folder."""

    def call(index: int, command: str, folder: str | None) -> Step:
        metadata = {"working_dir": folder} if folder else {}
        raw = {"call": {}, "result": {"extras": {"metadata": metadata}}}
        return Step(index=index, kind="tool", command=command, raw=raw)

    calls = [
        call(0, "ls src", None),
        call(1, "cat setup.py; cd /workspace/repo", "/workspace/repo"),
    ]
    oh.start_folders(calls, "extras")
    assert [c.cwd for c in calls] == [None, None]
