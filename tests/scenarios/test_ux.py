"""What a first-time user runs into: misspelt scenario keys and verifier names, a missing agent
script, resuming with another agent, what a FAIL line says, and telemetry's response count."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from agentlens.demo.tiny_repo import DEMO_SCENARIO
from agentlens.errors import ConfigError
from agentlens.providers.types import ChatResponse
from agentlens.reviews.telemetry import trajectory_telemetry
from agentlens.scenarios.agents import agent_factory
from agentlens.scenarios.scenario import Scenario, load_scenario
from tests.cli.conftest import Run
from tests.scenarios.conftest import scripted
from tests.scenarios.helpers import fixed_run, fold_run


def scenario_file(tmp_path: Path, **fields: object) -> Path:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({**DEMO_SCENARIO, **fields}))
    return path


def test_a_misspelt_key_is_refused_with_a_suggestion(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError, match="unknown scenario key 'max_step' \\(did you mean 'max_steps'\\?\\)"
    ):
        load_scenario(scenario_file(tmp_path, max_step=1))
    with pytest.raises(ConfigError, match="max_steps must be a number, not 'zero'"):
        load_scenario(scenario_file(tmp_path, max_steps="zero"))
    with pytest.raises(
        ConfigError, match="fixed_fst_user_message is set but there is no first_user_message"
    ):
        load_scenario(scenario_file(tmp_path, fixed_fst_user_message=True))


def test_verifier_mistakes_name_the_file_the_verifier_and_the_closest_name(tmp_path: Path) -> None:
    typo = scenario_file(tmp_path, verifiers=[{"type": "YesChangesVerifier", "target_files": ["a"]},
                                              {"type": "YesChangeVerifier"}])  # fmt: skip
    with pytest.raises(
        ConfigError,
        match=r"s\.json: verifier 2: unknown verifier type 'YesChangeVerifier'; did you mean 'YesChangesVerifier'",
    ):
        load_scenario(typo)
    field = scenario_file(
        tmp_path, verifiers=[{"type": "YesChangesVerifier", "target_file": ["a"]}]
    )
    with pytest.raises(
        ConfigError,
        match="verifier 1: YesChangesVerifier: unknown field 'target_file' \\(did you mean 'target_files'\\?\\)",
    ):
        load_scenario(field)
    with pytest.raises(ConfigError, match="verifier 1: no 'type'"):
        load_scenario(scenario_file(tmp_path, verifiers=[{"target_files": ["a"]}]))


def test_a_missing_agent_script_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"agent script '\./nope\.py' not found"):
        agent_factory("cmd:python ./nope.py {message}")


def test_resuming_with_another_agent_is_refused(
    run_cli: Callable[..., Run], calc_project: Path, tmp_path: Path
) -> None:
    scenario = scenario_file(
        tmp_path, max_steps=1, fixed_fst_user_message=True, first_user_message="Fix sub()."
    )
    out = str(tmp_path / "out")
    common = ("run", str(scenario), "--project", str(calc_project), "--out", out,
              "--simulator", "openai-compatible:http://127.0.0.1:9/v1#unused")  # fmt: skip
    first = run_cli(*common, "--agent", scripted("fix"))
    assert first.code == 0, first.err
    assert "FAIL" not in first.out and "PASS" in first.err  # a line per pair as it ends
    other = run_cli(*common, "--agent", scripted("silent"), "--resume")
    assert other.code == 2 and "resume it with the same agent" in other.err
    same = run_cli(*common, "--agent", scripted("fix"), "--resume")
    assert same.code == 0 and "resumed: 1 pair kept" in same.out


def test_a_fail_line_names_what_failed(
    run_cli: Callable[..., Run], calc_project: Path, tmp_path: Path
) -> None:
    scenario = scenario_file(
        tmp_path, max_steps=1, fixed_fst_user_message=True, first_user_message="Look around."
    )
    result = run_cli("run", str(scenario), "--project", str(calc_project), "--out", str(tmp_path / "o"),
                     "--agent", scripted("silent"), "--simulator", "openai-compatible:http://127.0.0.1:9/v1#unused")  # fmt: skip
    out = " ".join(result.out.split())
    assert "FAIL (YesChangesVerifier, PythonFileRegExpCountVerifier, RunTestsVerifier)" in out
    assert "1 user message," in out


@pytest.mark.parametrize("width", [60, 80])
def test_run_on_a_narrow_terminal_keeps_names_paths_and_verdicts_whole(
    run_cli: Callable[..., Run],
    calc_project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    width: int,
) -> None:
    """Below the table's width: the run folder's path on one line (to copy), the pair's name
    and its verdict each whole on a line of their own."""
    from agentlens.cli._app import console

    scenario = scenario_file(
        tmp_path, max_steps=1, fixed_fst_user_message=True, first_user_message="Look around."
    )
    out = tmp_path / "nightly-runs-of-the-calculator-project" / "2026-12-07-with-the-scripted-agent"
    monkeypatch.setattr(console, "width", width)
    result = run_cli("run", str(scenario), "--project", str(calc_project), "--out", str(out),
                     "--agent", scripted("silent"), "--simulator", "openai-compatible:http://127.0.0.1:9/v1#unused")  # fmt: skip
    lines = result.out.splitlines()
    assert lines[0] == "fix_sub / default  1 user message, 1 step, " + lines[0].split(", ")[-1]
    checks = "YesChangesVerifier, PythonFileRegExpCountVerifier, RunTestsVerifier"
    assert lines[1] == f"  FAIL ({checks})"
    assert lines[2] == "  ended: The agent produced no actions"
    assert f"trajectories: {out / 'trajectories'} (agentlens review / telemetry / qi)" in lines


def test_each_agent_response_is_its_own_turn_across_user_messages(
    calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    """An agent CLI numbers its responses from 0 on every call; telemetry must not merge them."""
    result = fold_run(replace(calc_scenario, max_steps=3), calc_project, tmp_path / "out", scripted("fix"),
                      [ChatResponse(text="Go on.")] * 4)  # fmt: skip
    traj = result.sessions[0].trajectory
    turns = [s.turn for s in traj.steps if s.kind != "user"]
    assert turns == sorted(turns) and len({*turns}) == 3  # one response per user message here
    assert len(trajectory_telemetry(traj).turns) == 3  # was 1: all merged into turn 0


def test_verify_on_a_session_workspace_at_80_columns(
    run_cli: Callable[..., Run], calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    """The README's `agentlens verify` on a run's `repo/`; names are not folded mid-word."""
    out = tmp_path / "out"
    fixed_run(calc_scenario, calc_project, out)
    scenario = scenario_file(tmp_path)
    repo = out / "sessions" / "fix_sub" / "default" / "attempt-1" / "repo"
    result = run_cli("verify", str(scenario), "--repo", str(repo))
    assert result.code == 0, result.err
    assert (
        "fix_sub: PASS" in result.out and "  pass  PythonFileRegExpCountVerifier  (" in result.out
    )


@pytest.mark.parametrize("who", ["--simulator", "--agent"])
@pytest.mark.parametrize("model", ["llamacpp", "openai"])
def test_an_unusable_model_is_refused_before_a_workspace_is_made(
    run_cli: Callable[..., Run],
    calc_project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    who: str,
    model: str,
) -> None:
    """A missing GGUF file or API key was found only when the first pair called the model, after
    its workspace was made, so the corrected command was refused: "already holds a run"."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    bad = f"llamacpp:{tmp_path / 'missing.gguf'}" if model == "llamacpp" else "openai:gpt-4.1"
    unused = "openai-compatible:http://127.0.0.1:9/v1#unused"
    models = ["--simulator", bad, "--agent", scripted("fix")]
    if who == "--agent":
        models = ["--simulator", unused, "--agent", f"bash:{bad}"]
    out = tmp_path / "out"
    result = run_cli("run", str(scenario_file(tmp_path, max_steps=1)), "--project", str(calc_project),
                     "--out", str(out), *models)  # fmt: skip
    expected = (
        "GGUF model file not found" if model == "llamacpp" else "no API key; set OPENAI_API_KEY"
    )
    assert result.code == 2 and expected in result.err, result.err
    assert not (out / "sessions").exists()  # so the corrected command is not refused
