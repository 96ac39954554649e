"""`kill PID` or a closed terminal during a serial cohort: the command exits 143 / 129 without a
traceback and takes its spill folder with it (a kill used to leave `/tmp/agentlens-spill-*`).
One handler does it, for a command and for a process pool in a script alike, and `--help` does
not import the engine to get it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import BENCH


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_removes_the_spill_folder(tmp_path: Path, sig: signal.Signals) -> None:
    command = [sys.executable, "-m", "agentlens", "cohort", str(BENCH / "trajectories"), "--json"]
    proc = subprocess.Popen(
        command,
        env=os.environ | {"TMPDIR": str(tmp_path)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob("agentlens-spill-*")) and time.monotonic() < deadline:
            assert proc.poll() is None, "the command ended before it spilled a run"
            time.sleep(0.02)
        spilled = list(tmp_path.glob("agentlens-spill-*"))
        assert spilled, "no spill folder appeared"
        time.sleep(0.3)  # the read is under way
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + sig, err
    assert err == f"stopped by {sig.name}\n"  # one line: it said nothing, and a log had no clue
    assert not any(p.exists() for p in spilled), "the spill folder outlived the command"


SCRIPT = """
import signal
from agentlens import stop_signals
from agentlens.cli._app import _stop_signals_exit
from agentlens.engine import get_engine

def now():
    return [signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)]

one, default = stop_signals.exit_on_signal, signal.SIG_DFL
assert now() == [default, default], now()
with _stop_signals_exit():
    assert now() == [one, one], now()
with get_engine("processes:2") as engine:
    assert [o.value for o in engine.map(abs, [-1, -2])] == [1, 2]
    assert now() == [one, default], now()
assert now() == [default, default], now()
stop_signals.exit_on_signal(signal.SIGTERM, None)
"""


def test_one_handler_stops_a_command_and_a_pool_in_a_script() -> None:
    """In a fresh interpreter (a test run may leave a handler of its own, as Ray's does)."""
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 128 + signal.SIGTERM, done.stderr
    assert done.stderr == ""


def test_help_does_not_import_the_engine() -> None:
    command = [sys.executable, "-X", "importtime", "-m", "agentlens", "--help"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    assert "agentlens.stop_signals" in imported
    assert not any(name.startswith("agentlens.engine") for name in imported)
