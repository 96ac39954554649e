"""`kill PID` (SIGTERM) during a cohort on a local Ray ends it as on the process pool: exit 143,
no native stack dump, no Ray process left. `ray.init` puts its own SIGTERM handlers in (Python's
`sys.exit(15)` and a native one that prints a stack and exits 1): an interrupted run looked like
one with a failed file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from tests.conftest import BENCH
from tests.engine.test_interrupt import MARK, marked, wait_for

pytest.importorskip("ray")


def _chunk_running(mark: str) -> bool:
    for pid in marked(mark):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if handle.read().startswith(b"ray::run_chunk"):
                    return True
        except OSError:
            continue
    return False


def test_sigterm_to_the_command_ends_a_ray_cohort_with_143() -> None:
    mark = os.urandom(8).hex()
    command = [sys.executable, "-m", "agentlens", "cohort", str(BENCH / "trajectories"),
               "--protocol", "agentlens-bench", "--engine", "ray", "--boot", "50"]  # fmt: skip
    proc = subprocess.Popen(command, env=os.environ | {MARK: mark}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    try:
        assert wait_for(lambda: _chunk_running(mark), 120), "no Ray task started"
        os.kill(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert wait_for(lambda: not marked(mark), 60), f"left behind: {marked(mark)}"
    finally:
        for pid in marked(mark):
            os.kill(pid, signal.SIGKILL)
    assert proc.returncode == 143, err
    assert "SIGTERM received" not in err and "Traceback" not in err, err
