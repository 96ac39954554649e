"""A check whose tool is not installed is skipped (naming what to install), never failed; a real
failure still fails. Failure injection: the checks run with PATH leading to a fresh venv that has
no pytest and no ruff (`python -m venv --without-pip`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentlens.demo.tiny_repo import DEMO_SCENARIO, apply_fix, create_repo
from agentlens.reviews.documents import formal_of, verifier_counts_of, verify_results
from agentlens.reviews.qi import qi_report
from agentlens.scenarios.scenario import Scenario, run_scenario
from agentlens.verification.sandbox import OVERTIME_S
from agentlens.verification.verifiers.base import VerifyContext
from agentlens.verification.verifiers.static_analysis import StaticAnalysisVerifier
from agentlens.verification.verifiers.tests_run import RunTestsVerifier


@pytest.fixture(scope="module")
def bare_venv(tmp_path_factory) -> Path:
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    return venv


@pytest.fixture
def bare_path(bare_venv, monkeypatch) -> str:
    """PATH whose `python` is a fresh venv without pytest, and with no `ruff` anywhere. The venv
    and its root are also on our own PATH, as an installed AgentLens's venv (`sys.prefix`) is:
    the sandbox binds those folders, and the venv's python needs its `pyvenv.cfg`."""
    monkeypatch.setenv("PATH", f"{bare_venv / 'bin'}:{bare_venv}:{os.environ['PATH']}")
    return f"{bare_venv / 'bin'}:/usr/bin:/bin"


@pytest.fixture
def fixed_repo(tmp_path) -> Path:
    repo = create_repo(tmp_path / "calc")
    apply_fix(repo)
    return repo


def test_missing_runner_and_linter_are_skipped_with_an_install_hint(bare_path, fixed_repo):
    ctx = VerifyContext(fixed_repo)
    tests = RunTestsVerifier(command=["python", "-m", "pytest", "-q"], env={"PATH": bare_path})
    lint = StaticAnalysisVerifier(tool="ruff", path="calc", env={"PATH": bare_path})
    for verifier, tool in ((tests, "pytest"), (lint, "ruff")):
        result = verifier.verify(ctx)
        assert result.status == "skipped", result.reason
        assert result.reason.startswith(f"skipped: install {tool} (pip install {tool})")
        assert not result.passed and result.metrics["missing_tool"] == tool


@pytest.mark.parametrize(
    ("command", "tool"),
    [
        ("python -m pytest -q", "pytest"),  # the README's scenario: the command as one string
        ("python -m coverage run -m pytest -q && python -m coverage json", "coverage"),
    ],
)
def test_a_missing_runner_in_a_shell_string_is_skipped_too(bare_path, fixed_repo, command, tool):
    """A string command runs under `sh -c`, where a missing module is `python`'s "No module
    named …", not the shell's "not found": it was an error and the scenario FAILED."""
    verifier = RunTestsVerifier(command=command, env={"PATH": bare_path})
    result = verifier.verify(VerifyContext(fixed_repo))
    assert result.status == "skipped", result.reason
    assert result.metrics["missing_tool"] == tool


def test_a_real_failure_with_the_tool_installed_still_fails(tmp_path):
    repo = create_repo(tmp_path / "calc")  # the bug is not fixed: test_sub fails
    result = RunTestsVerifier(command=[sys.executable, "-m", "pytest", "-q"]).verify(
        VerifyContext(repo)
    )
    assert result.status == "fail", result.reason


def test_a_missing_module_of_the_project_is_not_a_missing_tool(tmp_path):
    repo = create_repo(tmp_path / "calc")
    (repo / "tests" / "test_ops.py").write_text("import nosuchdep\n\ndef test_x():\n    pass\n")
    result = RunTestsVerifier(command=[sys.executable, "-m", "pytest", "-q"]).verify(
        VerifyContext(repo)
    )
    assert result.status in ("fail", "error") and "nosuchdep" in result.metrics["output_tail"]


def test_skipped_checks_leave_the_scenario_unscored_and_out_of_the_qi(
    bare_path, fixed_repo, tmp_path
):
    verifiers = [dict(v) for v in DEMO_SCENARIO["verifiers"]]  # type: ignore[union-attr]
    for v in verifiers:
        if v["type"] in ("RunTestsVerifier", "StaticAnalysisVerifier"):
            v["env"] = {**v.get("env", {}), "PATH": bare_path}
    result = run_scenario(Scenario("fix_sub", verifiers), fixed_repo)
    statuses = [r.status for r in result.results]
    assert statuses == ["pass", "pass", "pass", "skipped", "skipped"]
    assert not result.scored and result.verdict.startswith("not scored (2 checks skipped")
    doc = result.to_dict()
    assert doc["formal_verification_result"] is None
    assert doc["verifiers_passed_fraction"] == 1.0  # 3 of the 3 checks run
    path = tmp_path / "verify.json"
    path.write_text(json.dumps({"kind": "agentlens.verify/1", "results": [doc]}))
    assert formal_of(verify_results([path])) == []
    assert verifier_counts_of(verify_results([path])) == (3, 3)
    report = qi_report(None, [str(path)], None, [])
    assert report.result.value is None and "Formal" in report.result.reason
    assert any("1 scenario not scored" in w for w in report.result.warnings)


def test_the_demo_uses_its_own_interpreters_tools(fixed_repo):
    """The demo puts its interpreter's bin first on PATH: here pytest and ruff are installed
    there, so the scripted fix passes every check."""
    result = run_scenario(Scenario("fix_sub", list(DEMO_SCENARIO["verifiers"])), fixed_repo)  # type: ignore[call-overload]
    assert [r.status for r in result.results] == ["pass"] * 5, [r.reason for r in result.results]
    assert result.verdict == "PASS"


def test_verify_exits_4_not_1_when_a_check_could_not_run(bare_path, fixed_repo, tmp_path):
    verifiers = [dict(v) for v in DEMO_SCENARIO["verifiers"]]  # type: ignore[union-attr]
    for v in verifiers:
        if v["type"] == "StaticAnalysisVerifier":
            v["env"] = {**v.get("env", {}), "PATH": bare_path}
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(json.dumps({"name": "fix_sub", "verifiers": verifiers}))
    command = [
        sys.executable,
        "-m",
        "agentlens",
        "verify",
        str(scenario),
        "--repo",
        str(fixed_repo),
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, env=os.environ | {"COLUMNS": "200"}
    )
    assert done.returncode == 4, done.stdout + done.stderr
    assert "not scored (1 check skipped: install ruff)" in done.stdout


def test_qi_side_metric_is_na_when_every_check_was_skipped(bare_path, fixed_repo, tmp_path):
    """0 of 0 verifiers is no fraction: `qi` prints n/a and JSON null, not 0.000."""
    lint = [v for v in DEMO_SCENARIO["verifiers"] if v["type"] == "StaticAnalysisVerifier"]  # type: ignore[union-attr]
    scenario = Scenario("lint_only", [{**lint[0], "env": {"PATH": bare_path}}])
    result = run_scenario(scenario, fixed_repo)
    assert [r.status for r in result.results] == ["skipped"]
    assert result.to_dict()["verifiers_passed_fraction"] is None
    path = tmp_path / "verify.json"
    path.write_text(json.dumps({"kind": "agentlens.verify/1", "results": [result.to_dict()]}))
    text = _agentlens("qi", "--verify", str(path), "--component", "EndResult=1")
    assert "side metric (not in QI): 0/0 individual verifiers passed = n/a\n" in text
    doc = json.loads(_agentlens("qi", "--verify", str(path), "--json"))
    assert doc["verifiers_passed"] == {"passed": 0, "total": 0, "fraction": None}


def _agentlens(*args: str) -> str:
    command = [sys.executable, "-m", "agentlens", *args]
    env = os.environ | {"COLUMNS": "200"}
    return subprocess.run(command, capture_output=True, text=True, env=env).stdout


def test_a_tool_two_checks_lack_is_named_once(bare_path, fixed_repo):
    """Two pytest checks without pytest said `install pytest, pytest`."""
    tests = {"type": "RunTestsVerifier", "runner": "pytest", "env": {"PATH": bare_path}}
    verifiers = [
        {**tests, "command": "python -m pytest -q"},
        {**tests, "command": "python -m pytest"},
    ]
    result = run_scenario(Scenario("twice", verifiers), fixed_repo)
    assert result.verdict == "not scored (2 checks skipped: install pytest)"


SLOW_PROBE = """#!/bin/sh
case "$1" in
  -I) sleep 100 ;;
  *) echo "No module named 'pytest'"; exit 1 ;;
esac
"""


def test_the_probe_of_a_claimed_missing_tool_ends_soon_after_the_timeout(fixed_repo):
    """The probe had 60 s of its own, and its Python may be the agent's (`venv_path`): one
    that says pytest is missing, then sleeps when probed, made a check with a 5 s timeout
    take 60.5 s. The probe now ends by the timeout and `OVERTIME_S` (5 s)."""
    python = fixed_repo / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(SLOW_PROBE)
    python.chmod(0o755)
    verifier = RunTestsVerifier(venv_path=".venv", timeout_ms=2000)
    start = time.monotonic()
    result = verifier.verify(VerifyContext(fixed_repo))
    took = time.monotonic() - start
    assert result.status == "error" and "missing_tool" not in result.metrics, result.reason
    assert 2 + OVERTIME_S - 1 < took < 2 + OVERTIME_S + 3, took


def test_a_probe_that_times_out_says_so_in_the_reason(fixed_repo):
    """A probe that ran out of time left only `no pytest result found in the output`: the
    claim that pytest is missing, and that it was never settled, went unsaid."""
    python = fixed_repo / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(SLOW_PROBE)
    python.chmod(0o755)
    result = RunTestsVerifier(venv_path=".venv", timeout_ms=1000).verify(VerifyContext(fixed_repo))
    assert result.status == "error"
    said = "; the output says pytest is missing, but its probe timed out after "
    assert said in result.reason and result.reason.endswith(" s (not skipped)"), result.reason
