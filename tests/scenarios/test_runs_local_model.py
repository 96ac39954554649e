"""Scenario runs end to end: a real agent process (or the built-in shell agent) in a real git
project, the real local model as the simulated user, real verifiers."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from pathlib import Path

import pytest

from agentlens.formats import read_paths
from agentlens.formats.jsonl import load_jsonl
from agentlens.providers import get_provider
from agentlens.scenarios import (
    Fold,
    FoldResult,
    RunSettings,
    SimulatorSettings,
    Stop,
    load_persona,
    run_fold,
)
from agentlens.scenarios.agents import BashAgentSettings, agent_factory
from agentlens.scenarios.scenario import Scenario
from tests.scenarios.conftest import found, host_pids, scripted, session_marker

pytestmark = pytest.mark.llm


def run(
    scenario: Scenario,
    project: Path,
    out: Path,
    url: str,
    agent: str,
    *,
    personas: tuple[str, ...] = ("default",),
    attempts: int = 1,
    bash: BashAgentSettings | None = None,
) -> FoldResult:
    fold = Fold([scenario], [load_persona(p) for p in personas], attempts=attempts)
    simulator = get_provider(url, role="user_simulator", cache=False)
    settings = RunSettings(
        make_agent=agent_factory(agent, bash_settings=bash, cache=False),
        simulator=simulator,
        out=out,
        project=project,
        simulator_settings=SimulatorSettings(max_tokens=80),  # short answers: a quicker suite
    )
    return asyncio.run(run_fold(fold, settings))


def test_agent_cli_fixes_the_bug_and_the_run_passes(
    local_llm_url: str, calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    result = run(
        calc_scenario,
        calc_project,
        out,
        local_llm_url,
        scripted("fix"),
        personas=("default", "toxic"),
    )
    assert [s.termination.stop for s in result.sessions] == [Stop.MAX_USER_MESSAGES] * 2
    for session in result.sessions:
        traj = session.trajectory
        kinds = [s.kind for s in traj.steps]
        # user, (sed, file change, message), user, message: max_steps=2 user messages answered
        assert kinds == ["user", "tool", "tool", "agent", "user", "agent"]
        assert traj.steps[1].command.startswith("sed -i")
        assert str(traj.steps[1].category) == "edit"
        assert traj.outcome.status == "passed" and traj.outcome.source == "formal-verification"
        assert traj.metadata["termination_reason"] == "Reached the limit of user messages"
        assert traj.metadata["user_messages"] == 2
        assert traj.agent.name == "scripted_agent.py"  # the script, not its interpreter
        assert all(s.timestamp is not None for s in traj.steps)
        # the simulator saw the agent's change: the diff is in its second prompt
        prompts = [
            m["content"] for m in traj.metadata["simulator_transcript"] if m["role"] == "user"
        ]
        assert (
            "+    return a - b" in prompts[1]
            and '<tool_call name="command_execution">' in prompts[1]
        )
    # the project itself is untouched; each run worked on its own copy
    assert "return a + b  # bug" in (calc_project / "calc" / "ops.py").read_text()
    summary = result.summary()
    assert (summary["runs"], summary["formal_passed"], summary["formal_pass_rate"]) == (2, 2, 1.0)
    # the trajectories folder reads back as two runs, and each session kept its agent's traces
    back = read_paths([out / "trajectories"])
    assert not back.failures and len(back.trajectories) == 2
    assert (out / "sessions" / "fix_sub" / "toxic" / "attempt-1" / "turn-2.jsonl").is_file()
    assert (out / "run.json").is_file()


def test_agent_cli_writing_its_trace_to_a_file(
    local_llm_url: str, calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    """`{trace}`: the CLI writes a mini-swe-agent trajectory there, read by that reader."""
    scenario = replace(calc_scenario, max_steps=1)
    result = run(
        scenario, calc_project, tmp_path / "out", local_llm_url, scripted("mini", "{trace}")
    )
    steps = result.sessions[0].trajectory.steps
    assert [s.kind for s in steps] == ["user", "tool", "agent"]  # mini's system/task left out
    assert steps[1].command.startswith("sed -i") and steps[1].observation.startswith(
        "<returncode>0"
    )
    assert steps[2].text == "sub() now subtracts."
    trace = tmp_path / "out" / "sessions" / "fix_sub" / "default" / "attempt-1" / "turn-1.json"
    assert trace.is_file()


def test_a_claude_code_stream_on_stdout_is_an_agent_trace(
    local_llm_url: str, calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    """`claude -p --output-format stream-json --verbose`: its steps, model and turn costs."""
    result = run(calc_scenario, calc_project, tmp_path / "out", local_llm_url, scripted("claude"))
    session = result.sessions[0]
    traj = session.trajectory
    tools = [s for s in traj.steps if s.kind == "tool"]
    assert [(s.tool_name, s.category) for s in tools] == [("Bash", "edit")]  # sed -i
    assert tools[0].command is not None and tools[0].command.startswith("sed -i")
    assert tools[0].is_error is False
    assert traj.model == "claude-scripted"
    turns = traj.metadata["user_messages"]
    assert traj.cost_total() == pytest.approx(0.25 * turns)  # each turn's total_cost_usd
    assert "return a - b" in (session.workspace.path / "calc" / "ops.py").read_text()


def test_turn_timeout_kills_the_agent_and_gives_the_user_a_last_turn(
    local_llm_url: str, calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    marker = session_marker()
    scenario = replace(calc_scenario, agent_turn_timeout_seconds=2.0)
    result = run(scenario, calc_project, tmp_path / "out", local_llm_url, scripted("sleep", marker))
    session = result.sessions[0]
    assert session.termination.stop is Stop.AGENT_TURN_TIMEOUT
    assert session.termination.reason == "Waiting for the agent response timed out after 2s"
    assert "final_user_turn" in session.trajectory.metadata
    assert session.verification is not None  # a timeout is a finished run, checked formally
    assert not session.verification.passed
    # the sleeping agent was killed, not left behind
    assert found(tmp_path / "out", marker) is not None and not host_pids(marker)


def test_scenario_timeout_ends_the_run(
    local_llm_url: str, calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    # a fixed opening: the scenario's clock covers the simulator too, and on a loaded machine the
    # local model can take over 2 s to write one (that run would be a simulator failure)
    scenario = replace(
        calc_scenario,
        scenario_timeout_seconds=2.0,
        agent_turn_timeout_seconds=60,
        fixed_first_message=True,
        first_user_message="Please fix the subtraction bug in calc/ops.py.",
    )
    started = time.monotonic()
    result = run(
        scenario, calc_project, tmp_path / "out", local_llm_url, scripted("sleep", session_marker())
    )
    assert result.sessions[0].termination.reason == "Scenario timed out after 2s"
    assert time.monotonic() - started < 50


def test_a_crashing_agent_is_retried_and_left_out_of_the_pass_rate(
    local_llm_url: str, calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    result = run(calc_scenario, calc_project, out, local_llm_url, scripted("crash"), attempts=2)
    assert len(result.attempts) == 2 and len(result.sessions) == 1
    session = result.sessions[0]
    assert session.termination.stop is Stop.AGENT_ERROR
    assert "exited with 3: boom: the agent crashed" in session.termination.reason
    assert session.verification is None and session.trajectory.outcome.status == "unknown"
    summary = result.summary()
    assert (summary["failed_runs"], summary["formal_pass_rate"]) == (1, None)
    assert (out / "sessions" / "fix_sub" / "default" / "attempt-2" / "trajectory.jsonl").is_file()


def test_unreadable_agent_output_is_an_agent_failure(
    local_llm_url: str, calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    result = run(calc_scenario, calc_project, tmp_path / "out", local_llm_url, scripted("garbage"))
    reason = result.sessions[0].termination.reason
    assert result.sessions[0].termination.stop is Stop.AGENT_ERROR
    assert "not a readable trace" in reason and "turn-1.jsonl" in reason


def test_an_agent_that_does_nothing_ends_the_run(
    local_llm_url: str, calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    result = run(calc_scenario, calc_project, tmp_path / "out", local_llm_url, scripted("silent"))
    session = result.sessions[0]
    assert session.termination.stop is Stop.NO_ACTIONS
    assert session.trajectory.metadata["user_messages"] == 1
    assert session.verification is not None and not session.verification.passed


def test_built_in_shell_agent_on_the_local_model(
    local_llm_url: str, calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    """SmolLM2-135M will not fix anything; the run must still be complete and well formed."""
    scenario = replace(calc_scenario, max_steps=1)
    bash = BashAgentSettings(max_actions_per_turn=3, context_chars=6000, max_tokens=200)
    out = tmp_path / "out"
    result = run(scenario, calc_project, out, local_llm_url, f"bash:{local_llm_url}", bash=bash)
    session = result.sessions[0]
    traj = load_jsonl(out / "trajectories" / "fix_sub" / "default.jsonl")[0]
    assert traj.steps[0].kind == "user" and traj.steps[0].text
    agent_steps = traj.steps[1:]
    assert 1 <= len(agent_steps) <= 3
    assert all(s.usage is not None and s.usage.prompt_tokens > 0 for s in agent_steps)
    for step in agent_steps:
        if step.kind == "tool":
            assert step.observation.startswith("<returncode>") and step.command is not None
    assert traj.model == local_llm_url
    assert session.termination.stop in (Stop.MAX_USER_MESSAGES, Stop.AGENT_ERROR)
    assert (traj.outcome.status == "unknown") == (session.termination.stop is Stop.AGENT_ERROR)
