"""`memory_mb` as a cap on the sum of a sandboxed command's processes (`memory_group`), on the
real cgroups of this machine, with real bubblewrap on the demo's real calc repository."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import subprocess
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest

from agentlens.cli import review_cmd
from agentlens.demo.tiny_repo import create_repo
from agentlens.errors import ConfigError
from agentlens.scenarios.agents import bash as bash_agent
from agentlens.scenarios.agents._shell import run_shell
from agentlens.scenarios.agents.command import AgentFailure, CommandAgent
from agentlens.scenarios.scenario import Scenario, ScenarioResult, run_scenario
from agentlens.scenarios.turns import AgentTurn
from agentlens.scenarios.workspace import Workspace, changes_since_base
from agentlens.verification import disk_guard, isolation, memory_group, repo_git, sandbox
from agentlens.verification.repo_git import run_git
from agentlens.verification.sandbox import run_in_scratch
from agentlens.verification.verifiers import run_verifier
from agentlens.verification.verifiers.base import VerifyContext
from agentlens.verification.verifiers.static_analysis import CommandVerifier

# `count` helpers, each holding `mb` MB it has written to (untouched pages would cost nothing),
# until all have it: no clock decides whether they overlap (as `hold_together` in
# tests/scenarios/hostile_mcp_server.py). A helper says it holds by a line on its stdout, then
# waits for its stdin to close; one killed says nothing. After a death, `end` ends the command
# (what is left of it exits 0) and `wait` leaves it to AgentLens's guard to stop. It prints `mb`
# for each helper that held.
TOGETHER = """import subprocess, sys, time
count, mb, after_a_death = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
hold = f"import sys; b = bytes([1]) * ({mb} << 20); print(flush=True); sys.stdin.read()"
pipe = subprocess.PIPE
helpers = [subprocess.Popen([sys.executable, "-c", hold], stdin=pipe, stdout=pipe)
           for _ in range(count)]
held = [bool(helper.stdout.readline()) for helper in helpers]
if after_a_death == "wait" and not all(held):
    time.sleep(3600)
for helper in helpers:
    helper.stdin.close()
    helper.wait()
print(*[mb] * sum(held), sep="\\n")
"""


def holding_together(count: int, mb: int, after_a_death: str) -> str:
    return f"python3 -c {shlex.quote(TOGETHER)} {count} {mb} {after_a_death}"


FOUR_900 = holding_together(4, 900, "wait")
FOUR_900_END = holding_together(4, 900, "end")  # for git, which no guard watches while it runs
TWO_600 = f"{holding_together(2, 600, 'end')}; true"
CAP_1024 = isolation.Isolation(limits=isolation.Limits(memory_mb=1024))
STOPPED = "stopped: memory limit 1024 MB (sandbox memory_mb, all its processes)"


@pytest.fixture(autouse=True)
def _needs_bubblewrap() -> None:
    isolation.bubblewrap()  # the CI installs it; without it these tests must fail, not skip


@pytest.fixture
def calc(tmp_path: Path) -> Path:
    return create_repo(tmp_path / "calc")


def _groups_left() -> list[Path]:
    mine = f"{memory_group.GROUP_PREFIX}{os.getpid()}-*"
    return [group for _, parent in memory_group._parents() for group in parent.glob(mine)]


@pytest.mark.usefixtures("memory_cgroup")
def test_four_900_mb_processes_are_stopped_under_1024(calc: Path) -> None:
    """The limit was per process (RLIMIT_DATA): four 900 MB processes ran under 1024 MB."""
    with isolation.policy(CAP_1024):
        run, _ = run_in_scratch(calc, FOUR_900, timeout_s=30)
    assert run.returncode == -9 and not run.timed_out, run.output
    assert run.stopped == STOPPED and not run.ok
    assert "stopped:" not in run.output and "note:" not in run.output, run.output
    assert _groups_left() == []


@pytest.mark.usefixtures("memory_cgroup")
def test_the_agents_shell_is_stopped_the_same_way(calc: Path) -> None:
    """The stop line was the end of the command's output: the model and the judge read it as
    the program's words. It is AgentLens's note beside the output now, where a cut keeps it."""
    with isolation.policy(CAP_1024):
        result = asyncio.run(run_shell(FOUR_900, calc, timeout_s=30))
    assert result.returncode == -9 and result.stopped == STOPPED, result.output
    assert "stopped:" not in result.output, result.output
    observation = bash_agent._observation(result)
    assert observation.startswith(
        f"<returncode>-9</returncode>\n<agentlens_note>{STOPPED}</agentlens_note>\n<output>\n"
    ), observation
    assert STOPPED not in observation.partition("<output>")[2]
    assert _groups_left() == []


@pytest.mark.usefixtures("memory_cgroup")
@pytest.mark.parametrize(
    ("spec", "what"),
    [
        ({"type": "CommandVerifier", "command": FOUR_900, "forbidden_pattern": "memory"},
         "the command"),
        ({"type": "RunBuildSystemTaskVerifier", "command": FOUR_900,
          "reg_exp_pattern": "stopped"}, "the build"),
        ({"type": "RunTestsVerifier", "command": FOUR_900}, "pytest"),
    ],
)  # fmt: skip
def test_a_verifier_says_its_command_was_stopped_and_no_pattern_sees_it(
    calc: Path, spec: dict[str, Any], what: str
) -> None:
    """The stop line was in the output the verifier read: a user's forbidden pattern matched
    AgentLens's words, a count pattern counted them, a test-output parser found no result and
    said only that."""
    with isolation.policy(CAP_1024):
        result = run_verifier(spec, VerifyContext(calc))
    assert (result.status, result.reason) == ("error", f"{what} {STOPPED}"), result.reason
    assert result.metrics["stopped"] == STOPPED
    assert "stopped:" not in result.metrics["output_tail"], result.metrics


@pytest.mark.usefixtures("memory_cgroup")
def test_files_in_tmp_and_dev_shm_count_toward_it(calc: Path) -> None:
    """They are memory (tmpfs), each capped at `memory_mb` alone: 40 MB in each passed 64."""
    fill = "dd if=/dev/zero of={}/fill bs=1M count=40 2>/dev/null"
    script = f"{fill.format('/tmp')}; {fill.format('/dev/shm')}; sleep 5"
    with isolation.policy(isolation.Isolation(limits=isolation.Limits(memory_mb=64))):
        run, _ = run_in_scratch(calc, script, timeout_s=30)
    assert run.stopped == "stopped: memory limit 64 MB (sandbox memory_mb, all its processes)"


@pytest.mark.usefixtures("memory_cgroup")
def test_one_300_mb_process_under_1024_passes(calc: Path) -> None:
    with isolation.policy(CAP_1024):
        run, _ = run_in_scratch(calc, holding_together(1, 300, "end"), timeout_s=30)
    assert run.ok and run.output == "300\n", run.output
    assert _groups_left() == []


@pytest.mark.usefixtures("memory_cgroup")
def test_the_group_is_removed_after_a_timeout(calc: Path) -> None:
    with isolation.policy(CAP_1024):
        run, _ = run_in_scratch(calc, "sleep 30 & sleep 30", timeout_s=0.5)
    assert run.timed_out
    assert _groups_left() == []


@pytest.mark.usefixtures("memory_cgroup")
def test_the_group_is_removed_after_ctrl_c(calc: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Path] = []

    def interrupted(*_: object) -> str:
        time.sleep(0.2)  # the command has started
        seen.extend(_groups_left())
        raise KeyboardInterrupt

    monkeypatch.setattr(sandbox, "_wait", interrupted)
    with isolation.policy(CAP_1024), pytest.raises(KeyboardInterrupt):
        run_in_scratch(calc, "sleep 30", timeout_s=30)
    assert len(seen) == 1 and _groups_left() == []


@pytest.mark.usefixtures("memory_cgroup")
def test_a_group_left_by_a_killed_agentlens_is_removed_by_the_next() -> None:
    gone = _dead_pid()
    (_, parent), *_ = memory_group._parents()
    left = parent / f"{memory_group.GROUP_PREFIX}{gone}-1"
    left.mkdir()
    memory_group.make(16).remove()
    assert not left.exists()


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_without_a_writable_cgroup_the_result_says_per_process(
    calc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Failure injection: the only place to make a group in cannot hold one. A verifier's
    command says so in its notes; the agent's shell (whose output the model reads) does not,
    its session's notes (its scenario's `memory_limit`) do."""
    nowhere = calc.parent / "no-such-cgroup" / "x"
    monkeypatch.setattr(memory_group, "_parents", lambda: ((1, nowhere),))
    with isolation.policy(CAP_1024):
        run, _ = run_in_scratch(calc, "echo ran", timeout_s=30)
        with memory_group.ungrouped_notes() as ungrouped:
            shell = asyncio.run(run_shell("echo ran", calc, timeout_s=30))
    note = (
        "note: sandbox memory_mb (1024 MB) bounds each process, not their sum: "
        f"cannot make a cgroup in {nowhere}: No such file or directory"
    )
    assert run.ok and run.output == "ran\n" and run.notes == note, run.output
    assert shell.returncode == 0 and shell.output == "ran\n", shell.output
    assert ungrouped == [note]


def test_the_per_process_note_is_no_output_a_pattern_matches(
    calc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Failure injection as above: the note was prepended to the command's output, so a
    forbidden pattern of the user's matched AgentLens's words and `echo ok` failed."""
    nowhere = calc.parent / "no-such-cgroup" / "x"
    monkeypatch.setattr(memory_group, "_parents", lambda: ((1, nowhere),))
    verifier = CommandVerifier(command="echo ok", forbidden_pattern="No such file or directory")
    with isolation.policy(CAP_1024):
        result = verifier.verify(VerifyContext(calc))
    assert result.status == "pass", result.reason
    assert result.metrics["output_tail"] == "ok\n"
    assert "cannot make a cgroup" in result.metrics["sandbox_notes"]


def test_memory_limit_is_the_note_of_the_scenarios_own_commands(
    calc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Failure injection as above. `memory_limit` was process-wide state read at `to_dict`:
    a later scenario whose commands all had a group carried it too, and a saved result read
    back lost it when the process had not seen one."""
    nowhere = calc.parent / "no-such-cgroup" / "x"
    monkeypatch.setattr(memory_group, "_parents", lambda: ((1, nowhere),))
    scenario = Scenario("s", [{"type": "CommandVerifier", "command": "echo ok"}])
    with isolation.policy(CAP_1024):
        doc = run_scenario(scenario, calc).to_dict()
    assert "cannot make a cgroup" in doc["memory_limit"] and doc["verifier_results"]
    assert ScenarioResult.from_dict(doc).to_dict()["memory_limit"] == doc["memory_limit"]
    assert "memory_limit" not in ScenarioResult("later", [], 0.0).to_dict()


@pytest.mark.usefixtures("memory_cgroup")
def test_a_launcher_that_cannot_enter_the_group_is_not_read_as_the_commands_exit(
    calc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Failure injection: the launcher's write into the group fails (its exit 125). That was
    read as the command's own exit code; a command's own 125 still is."""
    with isolation.policy(CAP_1024):
        own, _ = run_in_scratch(calc, "exit 125", timeout_s=30)
        monkeypatch.setattr(memory_group, "ENTER", "exit 125")
        run, _ = run_in_scratch(calc, "echo ran", timeout_s=30)
        shell = asyncio.run(run_shell("echo ran", calc, timeout_s=30))
    assert own.returncode == 125 and own.output == "", own.output
    for code, output, stopped in ((run.returncode, run.output, run.stopped),
                                  (shell.returncode, shell.output, shell.stopped)):  # fmt: skip
        assert code is None and output == ""
        assert stopped.startswith("not started: cannot enter memory group /")
    assert _groups_left() == []


@pytest.mark.usefixtures("memory_cgroup")
def test_a_command_that_lost_a_process_and_exited_0_is_no_pass(
    calc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two 600 MB processes under 1024: one is killed, the shell exits 0. Failure injection:
    the guard never looks while it runs (as when all this falls between two of its looks), so
    only the check after the end sees the kill. That check's line went into the output, the
    exit code stayed 0, and the verifier passed."""
    monkeypatch.setattr(disk_guard, "POLL_S", 60.0)
    with isolation.policy(CAP_1024):
        run, _ = run_in_scratch(calc, TWO_600, timeout_s=30)
        result = run_verifier({"type": "CommandVerifier", "command": TWO_600}, VerifyContext(calc))
    assert (result.status, result.reason) == ("error", f"the command {STOPPED}"), result.reason
    assert run.returncode == 0 and run.stopped == STOPPED and not run.ok, run.output


@pytest.mark.usefixtures("memory_cgroup")
def test_a_cmd_agent_that_lost_a_process_is_a_failed_turn_saying_why(
    calc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Failure injection as above. The agent CLI lost a process to its memory cap and exited 0:
    its turn failed as an unreadable trace, the stop line lost at the end of its stderr."""
    monkeypatch.setattr(disk_guard, "POLL_S", 60.0)
    agent = CommandAgent(f"sh -c {shlex.quote(TWO_600)}", trace_dir=tmp_path / "session")
    with isolation.policy(CAP_1024), pytest.raises(AgentFailure) as failure:
        asyncio.run(agent.turn("hi", calc, AgentTurn()))
    assert str(failure.value) == f"sh was {STOPPED}"


def _eating_filter(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent's clean filter, which git runs on `calc/ops.py` as it hashes it: 4 x 900 MB.
    Failure injection: AgentLens now switches the repository's filters off (`plain_view`), so
    this stands for any program of the agent's that git would still run."""
    subprocess.run(["git", "-C", str(repo), "config", "filter.eat.clean", f"{FOUR_900_END}; cat"])
    (repo / ".gitattributes").write_text("calc/ops.py filter=eat\n")
    monkeypatch.setattr(repo_git, "plain_view", lambda *_, **__: repo_git.GitView([], {}))


@pytest.mark.usefixtures("memory_cgroup")
def test_a_git_call_whose_filter_is_killed_for_memory_fails(
    calc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent's clean filter (run by AgentLens's own `git`, in its group) held 4 x 900 MB
    under 1024: a process was killed, git exited 0 with a hash of part of the file, and only a
    line on its stderr said so."""
    _eating_filter(calc, monkeypatch)
    with isolation.policy(CAP_1024):
        done = run_git(calc, "hash-object", "calc/ops.py")
    assert done.returncode == repo_git.STOPPED_EXIT and done.stopped == STOPPED, done.stderr
    assert "stopped:" not in done.stderr
    assert _groups_left() == []


@pytest.mark.usefixtures("memory_cgroup")
def test_callers_of_a_stopped_git_say_their_changes_are_incomplete(
    calc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git said 0, so the verifiers, the simulator's and the judge's diffs took a partial one:
    files the agent never touched listed as changed, the change of `ops.py` passing a check."""
    base = run_git(calc, "rev-parse", "HEAD").stdout.strip()
    _eating_filter(calc, monkeypatch)
    (calc / "calc" / "ops.py").write_text("changed\n")
    spec = {"type": "YesChangesVerifier", "target_files": ["calc/ops.py"]}
    with isolation.policy(CAP_1024):
        result = run_verifier(spec, VerifyContext(calc))
        said = re.escape(f"{STOPPED} (its result would be incomplete)")  # one line for all three
        with pytest.raises(ConfigError, match=f"git add -A in .* failed: {said}"):
            changes_since_base(Workspace(calc, base))
        with pytest.raises(ConfigError, match=f"git diff HEAD failed: {said}"):
            review_cmd._diff(str(calc), "HEAD")
    assert result.status == "error" and result.reason.endswith(
        f"failed in {calc}: {STOPPED} (its result would be incomplete)"
    ), result.reason


def test_removing_the_shells_group_does_not_block_the_event_loop(
    calc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Failure injection: a group whose removal takes 2 s (`_remove` waits up to 5 s for its
    processes to go). It ran on the event loop, stalling every other session's turn. (A loaded
    host stalls the loop too, up to 0.3 s as the command starts: 1 s lies between.)"""
    remove = memory_group.MemoryGroup.remove
    monkeypatch.setattr(memory_group.MemoryGroup, "remove", lambda g: (time.sleep(2), remove(g)))
    with isolation.policy(CAP_1024):
        gap = asyncio.run(_longest_stall(run_shell("true", calc, timeout_s=30)))
    assert gap < 1.0, gap


async def _longest_stall(work: Coroutine[Any, Any, object]) -> float:
    """The longest the event loop did not run a 50 ms ticker while `work` ran."""
    gaps = [0.0]

    async def tick() -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.05)
            gaps.append(time.monotonic() - last)
            last = time.monotonic()

    ticker = asyncio.ensure_future(tick())
    try:
        await work
        await asyncio.sleep(0.1)  # the ticker's turn after a stall at the very end of `work`
    finally:
        ticker.cancel()
    return max(gaps)
