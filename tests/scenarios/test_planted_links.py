"""Links a sandboxed command leaves in its writable folders, pointing at host files, where
AgentLens writes or reads next (the next turn's trace, the session's records, the sandbox's
password file). AgentLens may run as root, so writing through such a link would let agent code
overwrite any file on the host; reading through one would hand it any host file."""

from __future__ import annotations

import asyncio
import os
from dataclasses import replace
from pathlib import Path

import pytest

from agentlens.demo.tiny_repo import DEMO_SCENARIO, apply_fix, create_repo
from agentlens.providers.types import ChatResponse
from agentlens.scenarios.agents._shell import run_shell
from agentlens.scenarios.agents.command import AgentFailure, CommandAgent
from agentlens.scenarios.scenario import Scenario
from agentlens.scenarios.turns import AgentTurn
from agentlens.verification import isolation
from tests.conftest import FORMATS
from tests.scenarios.conftest import scripted
from tests.scenarios.helpers import fold_run

HOST_TEXT = "the host's file\n"


def host_file(tmp_path: Path) -> Path:
    victim = tmp_path / "host" / "precious.txt"
    victim.parent.mkdir()
    victim.write_text(HOST_TEXT)
    return victim


def test_a_link_left_by_the_agent_is_never_written_through(
    calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    victim = host_file(tmp_path)
    scenario = replace(calc_scenario, max_steps=2)
    answers = [ChatResponse(text="Fix sub.")] * 3
    result = fold_run(
        scenario, calc_project, tmp_path / "out", scripted("plant", str(victim)), answers
    )
    session = result.sessions[0]
    assert victim.read_text() == HOST_TEXT
    folder = next((tmp_path / "out" / "sessions").rglob("attempt-1"))
    for name in ("turn-2.jsonl", "trajectory.jsonl", "verify.json"):
        assert not (folder / name).is_symlink() and (folder / name).is_file(), name
    assert [s.text for s in session.trajectory.steps if s.kind == "agent"][-1].startswith("Done")


@pytest.mark.skipif(os.geteuid() != 0, reason="the password file is written only as root")
def test_a_planted_password_file_link_is_not_written_through(tmp_path: Path) -> None:
    victim = host_file(tmp_path)
    work = tmp_path / "session" / "repo"
    work.mkdir(parents=True)
    first = asyncio.run(run_shell(f"ln -sf {victim} ../.passwd", work, timeout_s=30))
    second = asyncio.run(run_shell("echo still runs", work, timeout_s=30))
    assert first.returncode == 0 and second.output == "still runs\n"
    assert victim.read_text() == HOST_TEXT


def test_a_second_name_of_a_host_file_is_reclaimed_not_written_through(tmp_path: Path) -> None:
    """A hard link is a plain file with a second name: the password file AgentLens writes for
    the sandbox user, planted as one, is removed first (the host file keeps its text)."""
    victim = host_file(tmp_path)
    planted = tmp_path / "session" / ".passwd"
    planted.parent.mkdir()
    os.link(victim, planted)
    assert isolation.reclaim(planted) == planted and not planted.exists()
    assert victim.read_text() == HOST_TEXT


def test_a_trace_linked_to_a_host_file_is_not_read(tmp_path: Path) -> None:
    """The agent names a real Codex session of the host as its `{trace}`: it is refused, unread."""
    host_trace = next((FORMATS / "codex").rglob("*.jsonl"))
    work = tmp_path / "session" / "repo"
    work.mkdir(parents=True)
    agent = CommandAgent(f"ln -s {host_trace} {{trace}}", trace_dir=tmp_path / "session")
    with pytest.raises(AgentFailure, match=r"left a link or special file at .*turn-1\.json"):
        asyncio.run(agent.turn("hi", work, AgentTurn()))


def test_a_message_naming_a_host_file_does_not_open_it_to_the_agent(tmp_path: Path) -> None:
    """Folders of files the agent's own command line names are shown to it read-only; a user
    message (a simulator's text, which the agent's replies can steer) that is a file's path is
    not its command line."""
    secret = host_file(tmp_path)
    work = tmp_path / "session" / "repo"
    work.mkdir(parents=True)
    agent = CommandAgent("cat {message}", trace_dir=tmp_path / "session")
    with pytest.raises(AgentFailure, match=r"exited with 1: cat: .*No such file or directory"):
        asyncio.run(agent.turn(str(secret), work, AgentTurn()))
    assert HOST_TEXT not in (tmp_path / "session" / "turn-1.jsonl").read_text()


def test_a_workspace_replaced_by_a_link_is_not_verified_there(
    calc_project: Path, tmp_path: Path
) -> None:
    """The agent may write in its session folder, so it can rename its workspace and leave a
    link to a host folder in its place: the tests then ran, as root copied them, in the host
    folder (here the project with the bug fixed, so an agent that changed nothing passed; a
    link to /proc made the copy block for ever). The run is a scored failure instead."""
    host = create_repo(tmp_path / "host" / "calc")
    apply_fix(host)
    tests = next(v for v in DEMO_SCENARIO["verifiers"] if v["type"] == "RunTestsVerifier")  # type: ignore[union-attr, index]
    scenario = Scenario("fix_sub", [tests], max_steps=1, user_instruction="Fix sub.")
    answers = [ChatResponse(text="Fix sub.")]
    result = fold_run(
        scenario, calc_project, tmp_path / "out", scripted("swap", str(host)), answers
    )
    verification = result.sessions[0].verification
    assert verification is not None and verification.verdict == "FAIL"
    assert "replaced by a link" in verification.results[0].reason


def test_an_agent_script_in_the_home_folder_does_not_open_the_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`cmd:sh ~/agent.sh`: the folder of a script the command line names is shown read-only,
    and for a script directly in the home that folder was the whole home, `~/.ssh` included,
    to the agent CLI and every command its model wrote. Now only the script is shown there."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(HOST_TEXT)
    (home / "agent.sh").write_text(f"cat {home}/.ssh/id_ed25519\n")
    monkeypatch.setenv("HOME", str(home))
    work = tmp_path / "session" / "repo"
    work.mkdir(parents=True)
    agent = CommandAgent(f"sh {home}/agent.sh", trace_dir=tmp_path / "session")
    with pytest.raises(AgentFailure, match=r"exited with 1: cat: .*No such file or directory"):
        asyncio.run(agent.turn("hi", work, AgentTurn()))
    assert HOST_TEXT not in (tmp_path / "session" / "turn-1.jsonl").read_text()
