"""Second review pass: reused output folders, stops during verification, commands that leave
children behind, long dialogs, the released preprocessor shape, partial traces, git config."""

from __future__ import annotations

import asyncio
import itertools
import json
import shutil
import time
from dataclasses import replace
from pathlib import Path

import pytest

from agentlens.errors import ConfigError
from agentlens.providers import LLMClient
from agentlens.providers.types import ChatResponse
from agentlens.scenarios import SimulatedUser, SimulatorSettings, Stop, load_persona
from agentlens.scenarios.agents import agent_factory
from agentlens.scenarios.agents._shell import KEPT_OUTPUT_BYTES, run_shell
from agentlens.scenarios.agents.bash import _alternating
from agentlens.scenarios.agents.command import CommandAgent
from agentlens.scenarios.scenario import Scenario
from agentlens.scenarios.workspace import _preprocessor_command, diff_since_base, prepare
from agentlens.verification import sandbox
from tests.scenarios.conftest import scripted
from tests.scenarios.helpers import Scripted, fold_run


def test_a_used_output_folder_needs_resume(
    calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    scenario = replace(calc_scenario, max_steps=1)
    out = tmp_path / "out"
    fold_run(scenario, calc_project, out, scripted("crash"), [ChatResponse(text="Go.")] * 2)
    assert (out / "failed" / "fix_sub" / "default.jsonl").is_file()
    with pytest.raises(ConfigError, match="already holds a run: add --resume"):
        fold_run(scenario, calc_project, out, scripted("fix"), [ChatResponse(text="Go.")])


def test_resume_runs_failed_pairs_again_and_drops_the_stale_failure(
    calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    from agentlens.scenarios import Fold, RunSettings, run_fold

    scenario = replace(calc_scenario, max_steps=1)
    out = tmp_path / "out"
    fold_run(scenario, calc_project, out, scripted("crash"), [ChatResponse(text="Go.")] * 2)
    settings = RunSettings(make_agent=agent_factory(scripted("fix")), simulator=LLMClient(Scripted([ChatResponse(text="Go.")])),
                           out=out, project=calc_project, resume=True)  # fmt: skip
    result = asyncio.run(
        run_fold(Fold([scenario], [load_persona("default")], attempts=1), settings)
    )
    assert result.summary()["formal_passed"] == 1 and result.resumed == 0
    assert (out / "trajectories" / "fix_sub" / "default.jsonl").is_file()
    assert not (out / "failed" / "fix_sub" / "default.jsonl").exists()


def test_a_stopped_scope_starts_no_more_commands_and_others_are_unaffected(
    tmp_path: Path,
) -> None:
    work = tmp_path / "w"
    work.mkdir()
    with sandbox.command_scope() as scope:
        scope.stop()
        result = sandbox.run_command(["echo", "hi"], work, timeout_s=5)
        assert result.returncode is None and result.output == ""
        assert result.stopped == "not started: the run is stopping"
    # outside it (a later verify, another fold) commands run as usual
    assert sandbox.run_command(["echo", "hi"], work, timeout_s=5).output == "hi\n"
    with sandbox.command_scope():
        assert sandbox.run_command(["echo", "hi"], work, timeout_s=5).ok


def test_verifier_output_has_universal_newlines(tmp_path: Path) -> None:
    result = sandbox.run_command("printf 'BUILD SUCCESS\\r\\nnext\\r'", tmp_path, timeout_s=5)
    assert result.output == "BUILD SUCCESS\nnext\n"


def test_resume_counts_the_spend_of_every_earlier_run_of_a_failing_pair(
    calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    """Each run of the crashing pair costs $0.60 (opening + the logged last turn, $0.30 each)."""
    from agentlens.providers.pricing import Price, PriceTable
    from agentlens.providers.types import TokenUsage
    from agentlens.scenarios import Fold, RunSettings, run_fold

    answer = ChatResponse(text="Go.", usage=TokenUsage(prompt_tokens=300_000))
    out = tmp_path / "out"
    for run in range(3):
        client = LLMClient(Scripted([answer] * 2), prices=PriceTable({"sim": Price(1.0, 1.0, 0.0)}))
        settings = RunSettings(make_agent=agent_factory(scripted("crash")), simulator=client,
                               out=out, project=calc_project, resume=run > 0)  # fmt: skip
        fold = Fold([calc_scenario], [load_persona("default")], attempts=1, budget_dollars=None)
        result = asyncio.run(run_fold(fold, settings))
    assert result.spent == pytest.approx(1.8)
    saved = json.loads((out / "failed" / "fix_sub" / "default.jsonl").read_text())
    assert saved["metadata"]["pair_simulator_cost"] == pytest.approx(1.8)


def test_one_huge_view_is_cut_to_the_simulator_budget() -> None:
    scenario = Scenario("s", [], user_instruction="Fix it.")
    sim = SimulatedUser(LLMClient(Scripted([ChatResponse(text="a")] * 2)), load_persona("default"),
                        scenario, agent_name="A", project="/p", session_key="k",
                        settings=SimulatorSettings(context_chars=3000))  # fmt: skip
    asyncio.run(sim.first_message(scenario))
    view = f"<agent_turn>I changed it.</agent_turn>\n<code_diffs>\n{'d' * 20000}\n</code_diffs>"
    asyncio.run(sim.reply(view, first_reply=True))
    sent = sim.last_request
    assert sum(len(m["content"]) for m in sent) <= 3000
    assert sent[-1]["content"].startswith("<agent_turn>I changed it.</agent_turn>")
    assert "more characters cut]" in sent[-1]["content"]


def test_a_verifier_command_leaving_a_child_holding_output_returns(tmp_path: Path) -> None:
    (tmp_path / "w").mkdir()
    started = time.monotonic()
    result = sandbox.run_command("setsid sleep 15 & echo started", tmp_path / "w", timeout_s=10)
    assert result.ok and result.output.strip() == "started"
    assert time.monotonic() - started < 8  # not the child's 15 s


def test_the_simulator_request_stays_within_its_budget() -> None:
    scenario = Scenario("s", [], user_instruction="Fix it.")
    answers = [ChatResponse(text=f"answer {i}") for i in range(8)]
    sim = SimulatedUser(LLMClient(Scripted(answers)), load_persona("default"), scenario,
                        agent_name="A", project="/p", session_key="k",
                        settings=SimulatorSettings(context_chars=4000))  # fmt: skip
    asyncio.run(sim.first_message(scenario))
    for turn in range(6):
        agent_part = f"<agent_turn>{'t' * 900} {turn}</agent_turn>"
        view = f"{agent_part}\n<code_diffs>\n{'d' * 1500} {turn}\n</code_diffs>"
        asyncio.run(sim.reply(view, first_reply=turn == 0))
    sent = sim.last_request
    assert sum(len(m["content"]) for m in sent) < 4000 + 200
    assert [m["role"] for m in sent[:3]] == ["system", "user", "assistant"]
    roles = [m["role"] for m in sent[3:]]
    assert roles[0] == "user" and all(a != b for a, b in itertools.pairwise(roles))
    assert "earlier messages left out" in sent[3]["content"]
    assert sent[-1]["content"].endswith(f"{'d' * 1500} 5\n</code_diffs>")  # the latest diff whole
    assert sum("d" * 1500 in m["content"] for m in sent) == 1  # older diffs point to it


def test_the_released_preprocessor_shape_runs_the_build_tool() -> None:
    spec = {"type": "RunBuildSystemTaskPreprocessor", "build_system_name": "maven",
            "tasks": ["-DskipTests=true", "install"]}  # fmt: skip
    assert _preprocessor_command(spec) == ["mvn", "-o", "-B", "-DskipTests=true", "install"]
    with pytest.raises(ConfigError, match="has no 'command'"):
        _preprocessor_command({"build_system_name": "bazel", "tasks": ["build"]})


def test_a_timed_out_agent_cli_keeps_the_steps_it_printed(
    calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    scenario = replace(calc_scenario, agent_turn_timeout_seconds=2.0)
    result = fold_run(
        scenario,
        calc_project,
        tmp_path / "out",
        scripted("partial"),
        [ChatResponse(text="Go.")] * 2,
    )
    session = result.sessions[0]
    assert session.termination.stop is Stop.AGENT_TURN_TIMEOUT
    assert [s.kind for s in session.trajectory.steps] == ["user", "tool", "agent"]
    assert session.trajectory.steps[2].text == "Looking around first."


def test_huge_command_output_is_capped(tmp_path: Path) -> None:
    (tmp_path / "w").mkdir()
    result = asyncio.run(run_shell("yes | head -c 3000000", tmp_path / "w", timeout_s=30))
    assert len(result.output) < KEPT_OUTPUT_BYTES + 200
    # the tail is kept (the error, the summary), and the size of what was cut is said first
    assert result.output.startswith("[... first 2000000 of 3000000 bytes of output not kept]\n")
    assert result.output.endswith("y\n")


def test_bash_agent_context_keeps_roles_alternating() -> None:
    merged = _alternating([{"role": "system", "content": "s"}, {"role": "user", "content": "a"},
                           {"role": "user", "content": "b"}, {"role": "assistant", "content": "c"}])  # fmt: skip
    assert [(m["role"], m["content"]) for m in merged] == [
        ("system", "s"),
        ("user", "a\n\nb"),
        ("assistant", "c"),
    ]


def test_the_users_git_config_does_not_reach_the_workspace(
    calc_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "gitconfig"
    config.write_text("[commit]\n\tgpgsign = true\n[core]\n\thooksPath = /nonexistent/hooks\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    workspace = prepare(calc_project, tmp_path / "ws")  # a signing commit would fail here
    assert len(workspace.base) == 40


def test_a_nested_repository_without_commits_does_not_hide_the_diff(
    calc_project: Path, tmp_path: Path
) -> None:
    import subprocess

    workspace = prepare(calc_project, tmp_path / "ws")
    (workspace.path / "vendor").mkdir()
    subprocess.run(["git", "init", "-q", str(workspace.path / "vendor")], check=True)
    (workspace.path / "vendor" / "x.txt").write_text("x\n")
    ops = workspace.path / "calc" / "ops.py"
    ops.write_text(ops.read_text().replace("return a + b  # bug", "return a - b  # fixed"))
    assert "+    return a - b  # fixed" in diff_since_base(workspace)


def test_agent_commands_are_checked_and_local_scripts_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ConfigError, match="agent program 'codexx' not found"):
        agent_factory("cmd:codexx exec {message}")
    (tmp_path / "agent.py").write_text("print()\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x = 1\n")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python").symlink_to(shutil.which("python3") or "/usr/bin/python3")
    monkeypatch.chdir(tmp_path)
    agent = CommandAgent("python agent.py --file src/app.py {message}", trace_dir=tmp_path)
    # the script is ours to run; a file the agent should edit stays the workspace's copy
    assert agent.first == [
        "python",
        str(tmp_path / "agent.py"),
        "--file",
        "src/app.py",
        "{message}",
    ]
    linked = CommandAgent("./bin/python agent.py {message}", trace_dir=tmp_path)
    assert linked.first[0] == str(tmp_path / "bin" / "python")  # the link itself, not its target
    agent_factory("cmd:{workdir}/bin/agent {message}")  # only the workspace can tell: allowed
