"""Which processes a command left behind: shared by the engine tests and `benchmarks/engines.py`."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path


def in_group(pgid: int) -> list[int]:
    """Pids of live (not zombie) processes in process group `pgid`."""
    pids = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            pids.append(int(proc.name))
    return pids


def finish_in_group(proc: subprocess.Popen[str], timeout: float) -> tuple[str, str, list[int]]:
    """Stdout, stderr and the pids `proc` (started with `start_new_session=True`) left in its
    process group; the group is killed on a timeout and the strays after, so that none
    outlives the test."""
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    left = in_group(proc.pid)
    for stray in left:
        os.kill(stray, signal.SIGKILL)
    return out, err, left
