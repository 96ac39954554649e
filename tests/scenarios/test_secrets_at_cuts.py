"""Scenario texts that are cut before they are stored or sent (a command's output, an agent
CLI's stderr, a failed preprocessor's output, ruff's stderr) are masked before the cut: real
command output with a key planted where the cut falls keeps no part of the key."""

from __future__ import annotations

import asyncio
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from agentlens.scenarios import Stop
from agentlens.scenarios.agents._shell import KEPT_OUTPUT_BYTES, run_shell
from agentlens.scenarios.agents.command import AgentFailure, CommandAgent
from agentlens.scenarios.ide_errors import _ruff
from agentlens.scenarios.scenario import Scenario
from agentlens.scenarios.turns import AgentTurn
from tests.scenarios.conftest import scripted
from tests.scenarios.helpers import fold_run
from tests.secret_at_cut import kept_part_of_key, key_at_tail_cut, key_at_tail_cut_bytes


def test_a_secret_the_kept_end_of_a_commands_output_starts_in_is_masked(tmp_path: Path) -> None:
    """The built-in agent's shell keeps the last `KEPT_OUTPUT_BYTES` of a command's output; a
    key that cut fell in was kept as its last 40 characters, no longer a key to any detector,
    and the agent's view of the output (its head) sent them."""
    work = tmp_path / "w"
    work.mkdir()
    (work / "build.log").write_bytes(key_at_tail_cut_bytes(KEPT_OUTPUT_BYTES))
    result = asyncio.run(run_shell("cat build.log", work, timeout_s=30))
    assert result.output.startswith("[... first 2023 of 1002023 bytes of output not kept]\n")
    assert "was [REDACTED:openai-key]\n" in result.output[:200]
    assert kept_part_of_key(result.output) == []


def test_a_secret_the_stderr_cut_of_a_failing_agent_cli_falls_in_is_masked(
    tmp_path: Path,
) -> None:
    """An agent CLI that fails is reported with the last 400 characters of its stderr (the run's
    termination reason, stored with the run)."""
    work = tmp_path / "session" / "repo"
    work.mkdir(parents=True)
    (work / "stderr.txt").write_text(key_at_tail_cut(400))
    agent = CommandAgent("sh -c 'cat stderr.txt >&2; exit 3'", trace_dir=tmp_path / "session")
    with pytest.raises(AgentFailure) as failure:
        asyncio.run(agent.turn("hi", work, AgentTurn()))
    assert "exited with 3: " in str(failure.value)
    assert kept_part_of_key(str(failure.value)) == []


def test_a_secret_the_output_cut_of_a_failed_preprocessor_falls_in_is_not_stored(
    calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    """A failed preprocessor's last 500 characters of output are the run's termination reason,
    saved with its trajectory and in the store."""
    (calc_project / "build.log").write_text(key_at_tail_cut(500))
    scenario = replace(calc_scenario, preprocessors=[{"command": "cat build.log; exit 4"}])
    result = fold_run(scenario, calc_project, tmp_path / "out", scripted("fix"), [])
    session = result.sessions[0]
    assert session.termination.stop is Stop.SETUP_ERROR
    saved = (tmp_path / "out" / "failed" / "fix_sub" / "default.jsonl").read_text()
    assert kept_part_of_key(session.termination.reason) == [] and kept_part_of_key(saved) == []


def test_a_secret_the_stderr_cut_of_a_failing_ruff_falls_in_is_masked(tmp_path: Path) -> None:
    """A ruff that fails (here one that crashes printing a file) gives the IDE report, which the
    simulator and the judge read, the last 300 characters of its stderr."""
    (tmp_path / "crash.txt").write_text(key_at_tail_cut(300))
    ruff = tmp_path / "ruff"
    ruff.write_text(f"#!/bin/sh\ncat {tmp_path / 'crash.txt'} >&2\nexit 2\n")
    ruff.chmod(ruff.stat().st_mode | stat.S_IEXEC)
    report = _ruff(str(ruff), tmp_path, ["a.py"])
    assert report.note is not None and report.note.startswith("ruff exited 2: ")
    assert kept_part_of_key(report.note) == []
