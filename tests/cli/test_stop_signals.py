"""`kill PID` or a closed terminal during a serial cohort: the command exits 143 / 129 without a
traceback and takes its spill folder with it (a kill used to leave `/tmp/agentlens-spill-*`)."""

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
    assert "Traceback" not in err, err
    assert not any(p.exists() for p in spilled), "the spill folder outlived the command"
