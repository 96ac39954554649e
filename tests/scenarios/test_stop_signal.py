"""Stopping `agentlens run` (SIGTERM from a cancelled CI job, or Ctrl-C) kills the agent's
processes too, although they run in sessions of their own (a real CLI process, real signals)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentlens.demo.tiny_repo import DEMO_SCENARIO
from tests.scenarios.conftest import alive, found, host_pids, scripted, session_marker


def wait_for(check, timeout_s: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_stopping_the_run_kills_the_agent(
    stop: signal.Signals, calc_project: Path, tmp_path: Path
) -> None:
    scenario = tmp_path / "scenario.json"
    doc = {**DEMO_SCENARIO, "fixed_fst_user_message": True, "first_user_message": "Fix sub()."}
    scenario.write_text(json.dumps(doc))  # a fixed first message: no simulator call is needed
    marker, out = session_marker(), tmp_path / "out"
    argv = [sys.executable, "-m", "agentlens", "run", str(scenario), "--project", str(calc_project),
            "--agent", scripted("sleep", marker), "--out", str(out),
            "--simulator", "openai-compatible:http://127.0.0.1:9/v1#unused"]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_for(lambda: found(out, marker), 60), (
            proc.stderr.read() if proc.poll() is not None else ""
        )
        agent_pids = host_pids(marker)  # the pid it wrote is its PID namespace's
        assert agent_pids
        proc.send_signal(stop)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    # SIGTERM exited 130 as Ctrl-C does, and `aborted` (after a blank line) followed the line
    assert proc.returncode == 128 + stop, err
    assert (
        err.startswith(f"stopped: 0 of 1 pair finished and kept in {out}; ")
        and err.count("\n") == 1
    ), err
    assert wait_for(lambda: not any(map(alive, agent_pids)), 10), "the agent outlived the run"


def test_stopping_during_the_formal_checks_kills_the_verifier(
    calc_project: Path, tmp_path: Path
) -> None:
    """Verifiers run in a thread; the running command must be killed and the next ones must not
    start (three 60 s verifiers here), not waited for."""
    token = session_marker()  # names the sandboxed shell on the host (its $$ is namespaced)
    slow = {"type": "CommandVerifier", "command": f"sleep 60; : {token}"}
    doc = {"verifiers": [slow] * 3, "fixed_fst_user_message": True, "first_user_message": "Fix sub().",
           "max_steps": 1}  # fmt: skip
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps(doc))
    argv = [sys.executable, "-m", "agentlens", "run", str(scenario), "--project", str(calc_project),
            "--agent", scripted("fix"), "--out", str(tmp_path / "out"),
            "--simulator", "openai-compatible:http://127.0.0.1:9/v1#unused"]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_for(lambda: host_pids(token), 60)
        verifier_pids = host_pids(token)
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
        stopped_in = time.monotonic() - started
    finally:
        proc.kill()
    assert proc.returncode == 143
    assert stopped_in < 20  # not the 60 s the verifier would take
    assert wait_for(lambda: not any(map(alive, verifier_pids)), 10)
