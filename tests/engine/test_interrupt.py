"""Ctrl-C or SIGTERM during a pooled cohort run: exit 130 / 143, no traceback, no worker left
behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from tests.conftest import BENCH
from tests.process_group import in_group

MARK = "AGENTLENS_TEST_MARK"


def marked(mark: str) -> list[int]:
    """Pids of live processes whose environment carries the mark (the command and its workers)."""
    pids = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            environ = (proc / "environ").read_bytes()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if f"{MARK}={mark}".encode() in environ.split(b"\0") and state != "Z":
            pids.append(int(proc.name))
    return pids


def wait_for(condition: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return True
        time.sleep(0.1)
    return False


def test_ctrl_c_stops_the_pool_cleanly() -> None:
    proc, mark = start_cohort()
    try:
        assert wait_for(lambda: len(marked(mark)) >= 4, 30), "pool did not start"
        time.sleep(2.5)  # reading done, scoring under way
        assert proc.poll() is None
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C sends: every process in the group
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert wait_for(lambda: not marked(mark), 30), f"left behind: {marked(mark)}"


def test_sigterm_to_the_command_alone_stops_its_pool() -> None:
    """`kill PID` reaches the parent only; its forkserver and workers must not outlive it."""
    proc, mark = start_cohort()
    try:
        assert wait_for(lambda: len(marked(mark)) >= 4, 30), "pool did not start"
        time.sleep(2.5)
        os.kill(proc.pid, signal.SIGTERM)
        assert wait_for(lambda: proc.poll() is not None, 30), "the command did not stop"
        assert wait_for(lambda: not marked(mark), 30), f"left behind: {marked(mark)}"
    finally:
        for pid in marked(mark):
            os.kill(pid, signal.SIGKILL)
    assert proc.returncode == 143
    assert "Traceback" not in (proc.stderr.read() if proc.stderr else "")


def start_cohort() -> tuple[subprocess.Popen[str], str]:
    mark = uuid.uuid4().hex
    command = [sys.executable, "-m", "agentlens", "cohort", str(BENCH / "trajectories")]
    proc = subprocess.Popen(
        [*command, "--engine", "processes:2", "--json"],
        env=os.environ | {MARK: mark},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    return proc, mark


def test_a_finished_pooled_run_leaves_no_process_in_its_group() -> None:
    """The forkserver and resource tracker would each outlive the command by a moment."""
    task = BENCH / "trajectories" / "psf__requests-1724"
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentlens", "cohort", str(task), "--engine", "processes:2",
         "--protocol", "agentlens-bench", "--no-tables"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    _, err = proc.communicate(timeout=300)
    left = in_group(proc.pid)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert proc.returncode == 0, err
    assert left == []


def test_after_ctrl_c_the_group_is_empty_at_once() -> None:
    proc, mark = start_cohort()
    try:
        assert wait_for(lambda: len(marked(mark)) >= 4, 30), "pool did not start"
        time.sleep(2.5)
        os.killpg(proc.pid, signal.SIGINT)
        proc.communicate(timeout=30)
        left = in_group(proc.pid)
    finally:
        for pid in marked(mark):
            os.kill(pid, signal.SIGKILL)
    assert proc.returncode == 130
    assert left == []
