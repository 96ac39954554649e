"""What a demanding user's runs will meet: output folders inside the project, broken setups and
repositories, background jobs, odd names and command lines, a simulator that will not talk."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from agentlens.errors import ConfigError
from agentlens.providers.types import ChatResponse
from agentlens.scenarios import Stop, workspace
from agentlens.scenarios.scenario import Scenario
from agentlens.verification.tree_copy import remove_tree
from tests.cli.conftest import Run
from tests.scenarios.conftest import found, host_pids, scripted, session_marker
from tests.scenarios.helpers import fold_run


def test_an_output_folder_inside_the_project_is_not_copied(
    calc_project: Path, calc_scenario: Scenario
) -> None:
    out = calc_project / "runs" / "x"
    scenario = replace(calc_scenario, max_steps=1)
    result = fold_run(scenario, calc_project, out, scripted("fix"), [ChatResponse(text="Fix sub().")] * 2,
                      personas=("default", "toxic"))  # fmt: skip
    assert [s.verification.passed for s in result.sessions if s.verification] == [True, True]
    for session in result.sessions:
        assert not (session.workspace.path / "runs" / "x").exists()


def test_a_failing_preprocessor_fails_that_run_only(
    calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    scenario = replace(
        calc_scenario,
        preprocessors=[{"command": "echo no build tool >&2; exit 4"}],
        tags=["testing"],
    )
    result = fold_run(scenario, calc_project, tmp_path / "out", scripted("fix"), [], attempts=2)
    assert [a.termination.stop for a in result.attempts] == [Stop.SETUP_ERROR] * 2
    assert result.sessions[0].trajectory.metadata["scenario_tags"] == ["testing"]
    assert "no build tool" in result.sessions[0].termination.reason
    assert (tmp_path / "out" / "run.json").is_file()
    assert (
        tmp_path / "out" / "failed" / "fix_sub" / "default.jsonl"
    ).is_file()  # not in trajectories/
    assert not (tmp_path / "out" / "trajectories").exists()


def test_an_agent_that_deletes_the_repository_fails_formally(
    calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    result = fold_run(calc_scenario, calc_project, tmp_path / "out", scripted("breakgit"),
                      [ChatResponse(text="Fix sub().")] * 3)  # fmt: skip
    session = result.sessions[0]
    assert session.termination.stop is Stop.MAX_USER_MESSAGES
    assert session.verification is not None and not session.verification.passed
    prompts = [m["content"] for m in session.trajectory.metadata["simulator_transcript"]]
    assert any("(the changes cannot be shown:" in p for p in prompts)


def test_background_jobs_die_with_the_agent_turn(
    calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    """The job runs in a session of its own (`setsid`) and sleeps 300 s; it dies with the
    sandbox's PID namespace. It was a job of 3 s looked for 4 s later, for its file, then for
    its process: late under load, it could write and end between the two looks."""
    marker = session_marker()
    scenario = replace(calc_scenario, max_steps=1)
    out = tmp_path / "out"
    fold_run(scenario, calc_project, out, scripted("orphan", marker), [ChatResponse(text="Go.")])
    started = found(out, marker)
    assert started is not None and started.read_text().strip().isdigit()
    left = _running_after(marker, wait_s=60)  # gone long before its 300 s is killed, not done
    for pid in left:  # the job and its `sleep` (it leads a session of its own)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
    assert left == [] and found(out, marker + ".late") is None


def _running_after(marker: str, *, wait_s: float) -> list[int]:
    """The host processes naming `marker` that are still running after `wait_s`, or none as
    soon as all are gone."""
    deadline = time.monotonic() + wait_s
    while (pids := host_pids(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return pids


def test_a_grandchild_holding_stdout_does_not_stretch_the_turn_timeout(
    calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    scenario = replace(calc_scenario, agent_turn_timeout_seconds=2.0)
    started = time.monotonic()
    result = fold_run(scenario, calc_project, tmp_path / "out", scripted("holdpipe"),
                      [ChatResponse(text="Go.")] * 3)  # fmt: skip
    assert result.sessions[0].termination.stop is Stop.AGENT_TURN_TIMEOUT
    assert time.monotonic() - started < 20  # the grandchild holds the old pipe for 30 s


def test_a_simulator_that_gives_no_opening_is_a_failed_run(
    calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    result = fold_run(
        calc_scenario, calc_project, tmp_path / "out", scripted("fix"), [ChatResponse(text="")] * 6
    )
    session = result.sessions[0]
    assert session.termination.stop is Stop.SIMULATOR_ERROR and session.failed
    assert "gave no opening message" in session.termination.reason
    assert result.summary()["formal_pass_rate"] is None  # not a formal FAIL of the agent


def test_a_failing_last_simulator_turn_keeps_the_real_ending(
    calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    """The opening is answered, then the scripted model runs dry (ProviderError) on the
    logged-only turn after the turn timeout: the run still ended by the timeout."""
    scenario = replace(calc_scenario, agent_turn_timeout_seconds=1.0)
    result = fold_run(scenario, calc_project, tmp_path / "out", scripted("sleep", session_marker()),
                      [ChatResponse(text="Fix sub().")])  # fmt: skip
    session = result.sessions[0]
    assert session.termination.stop is Stop.AGENT_TURN_TIMEOUT and not session.failed
    assert "the last simulator call failed" in session.trajectory.metadata["final_user_turn"]


def test_names_that_cannot_name_a_folder_and_duplicate_pairs_are_refused(
    calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match="cannot name a folder"):
        fold_run(
            replace(calc_scenario, name="../escaped"),
            calc_project,
            tmp_path / "o",
            scripted("fix"),
            [],
        )
    with pytest.raises(ConfigError, match="is given twice"):
        fold_run(
            calc_scenario,
            calc_project,
            tmp_path / "o",
            scripted("fix"),
            [],
            personas=("toxic", "toxic"),
        )
    assert not (tmp_path / "o").exists() and not (tmp_path / "escaped__default.jsonl").exists()


def test_an_unbalanced_quote_in_the_agent_command_is_one_line(
    run_cli: Callable[..., Run], tmp_path: Path, calc_project: Path
) -> None:
    scenario = tmp_path / "s.json"
    scenario.write_text('{"verifiers": []}')
    result = run_cli("run", str(scenario), "--project", str(calc_project), "--out", str(tmp_path / "o"),
                     "--agent", "cmd:echo 'unclosed {message}")  # fmt: skip
    assert (
        result.code == 2
        and "No closing quotation" in result.err
        and "internal error" not in result.err
    )


def test_a_listing_that_hangs_ends_by_its_limit_and_says_so_in_the_run(
    calc_project: Path, calc_scenario: Scenario, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each git call of the simulator's listing after a turn had 60 s (600 s for `add`), and a
    stalled listing was told to the simulator only: a FIFO the agent left as
    `.git/info/exclude` held each turn for 60.1 s."""
    monkeypatch.setattr(workspace, "LISTING_TIMEOUT_S", 2.0)
    scenario = replace(calc_scenario, max_steps=1, verifier_timeout_seconds=2)
    start = time.monotonic()
    result = fold_run(scenario, calc_project, tmp_path / "out", scripted("fifo"),
                      [ChatResponse(text="Fix sub().")] * 2)  # fmt: skip
    took = time.monotonic() - start
    line = result.sessions[0].trajectory.metadata["changes_unlisted"]
    assert line.startswith("the changes could not be listed after 1 agent turn; first: git ")
    assert "timed out: listing the changes took over the 2 s timeout" in line, line
    assert result.summary()["sessions"][0]["changes_unlisted"] == line  # run.json's
    assert took < 30, took


def test_a_changed_file_nested_past_the_recursion_limit_gets_its_ide_errors(
    calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    """Copying the changed files for the IDE errors made each folder by `mkdir(parents=True)`,
    a call per folder: a file the agent wrote 1,500 folders deep ended the whole run in a
    `RecursionError`."""
    scenario = replace(calc_scenario, max_steps=1)
    try:
        result = fold_run(scenario, calc_project, tmp_path / "out", scripted("deep"),
                          [ChatResponse(text="Fix sub().")] * 2)  # fmt: skip
        session = result.sessions[0]
        report = session.trajectory.metadata["ide_errors"]
    finally:  # pytest's cleanup nests a call per folder: the tree goes here
        deep = list((tmp_path / "out").glob("sessions/*/*/*/repo/calc/d"))
        for tree in deep:
            remove_tree(tree)
    assert deep  # else the tree is left for pytest's cleanup, which fails on it
    assert session.termination.stop is Stop.MAX_USER_MESSAGES
    assert any(name.endswith("/d/x.py") for name in report["errors"]), report
