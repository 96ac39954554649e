"""Ray workers, raylets and starts that fail: the Ray engine goes on as the process pool does, or
stops in one line of ours, and leaves no Ray process behind."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest

from agentlens.engine import WorkerLostError
from agentlens.seams import Engine
from tests.conftest import BENCH, needed
from tests.engine.test_interrupt import MARK, marked, wait_for
from tests.engine.test_map import ROOT, assert_ray_stays_quiet
from tests.engine.test_ray_sigterm import _chunk_running
from tests.engine.units import die_noting, die_noting_always, reciprocal

needed("ray")

DIED_TWICE = "a Ray worker process died (killed, out of memory, a crash?) running it, twice"


def test_an_item_that_kills_its_ray_worker_fails_alone(
    ray_engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 3 kills its worker (SIGKILL) in a chunk of 3: the chunk goes again an item per task,
    item 3 is sent a second time on its own, dies again, and fails; the rest are scored."""
    attempts = tmp_path / "attempts"
    outcomes = ray_engine.map(partial(die_noting, str(attempts)), list(range(9)), chunksize=3)
    lost = time.monotonic()
    spared = [i for i in range(9) if i != 3]  # what serial gives for all but item 3
    assert [(o.index, o.value) for o in outcomes if o.ok] == list(zip(spared, spared, strict=True))
    (failed,) = [o for o in outcomes if not o.ok]
    assert failed.index == 3 and failed.error is not None
    assert (failed.error.type, failed.error.message) == ("WorkerLostError", DIED_TWICE)
    pids = attempts.read_text().split()
    assert len(pids) == 3 and len(set(pids)) == 3  # in its chunk, then twice alone, new workers
    assert [o.value for o in ray_engine.map(reciprocal, [2])] == [0.5]  # the engine goes on
    assert_ray_stays_quiet(capsys, since=lost)


def test_ray_workers_dying_on_every_item_stop_the_batch_after_a_bound(
    ray_engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A machine where every item dies: one line once 9 tasks or items (2 workers x 4, plus
    one) were lost in a row, the tasks still queued cancelled."""
    attempts = tmp_path / "attempts"
    with pytest.raises(WorkerLostError) as info:
        ray_engine.map(partial(die_noting_always, str(attempts)), list(range(40)))
    assert str(info.value) == (
        "a Ray worker process died (killed, out of memory, a crash?); the batch was stopped: Ray "
        "workers died on 9 tasks or items in a row with nothing scored in between. Rerun with "
        "--engine processes:N (fewer workers) or serial, or give the Ray nodes more memory"
    )
    assert 9 <= len(attempts.read_text().split()) < 20  # 8 chunks of 5, then singles
    assert [o.value for o in ray_engine.map(reciprocal, [2])] == [0.5]
    assert_ray_stays_quiet(capsys)


def _cohort(mark: str, *extra: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "agentlens", *extra, "cohort", str(BENCH / "trajectories"),
               "--protocol", "agentlens-bench", "--engine", "ray", "--boot", "50"]  # fmt: skip
    return subprocess.Popen(
        command, env=os.environ | {MARK: mark, "RAY_ADDRESS": ""}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip


def _raylet(mark: str) -> int | None:
    for pid in marked(mark):
        try:
            if b"/raylet" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]:
                return pid
        except OSError:
            continue
    return None


@pytest.mark.parametrize("debug", [False, True])
def test_a_raylet_lost_mid_run_is_our_one_line_and_no_process_is_left(debug: bool) -> None:
    """The raylet killed while a task runs: exit 2 and our one line, where Ray's driver printed
    the raylet's last log lines and state dump (~45 lines) beside it; with --debug, Ray's
    report too. No process of that Ray is left."""
    mark = os.urandom(8).hex()
    proc = _cohort(mark, *(["--debug"] if debug else []))
    try:
        assert wait_for(lambda: _chunk_running(mark), 120), "no Ray task started"
        raylet = _raylet(mark)
        assert raylet is not None, "no raylet found"
        os.kill(raylet, signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
        assert wait_for(lambda: not marked(mark), 60), f"left behind: {marked(mark)}"
    finally:
        for pid in marked(mark):
            os.kill(pid, signal.SIGKILL)
    assert out == "", err
    lines = [x for x in err.splitlines() if x.strip()]  # rich leaves blank lines
    if debug:  # Ray's report kept, and our error raised with its traceback
        assert any("Raylet is terminated" in x for x in lines), err
        assert "WorkerLostError: a Ray node was lost" in err, err
        return
    assert proc.returncode == 2 and len(lines) == 1, err
    assert re.fullmatch(
        r"error: a Ray node was lost \(\w+\); the batch was stopped\. Rerun with --engine "
        r"processes:N \(fewer workers\) or serial, or give the Ray nodes more memory",
        lines[0],
    ), err


HANG = (
    "import sys, time\n"
    "import ray._private.services as services\n"
    "def never(*args, **kwargs):  # a raylet that never registers, a GCS that never says so\n"
    "    time.sleep(3600)\n"
    "services.get_node = never\n"
    "from agentlens.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def test_a_local_ray_that_does_not_start_is_one_line_in_bounded_time() -> None:
    """`ray.init` waiting for ever on its node (a raylet lost during the start left the driver
    waiting over ten minutes, deaf to Ctrl-C): one line after `AGENTLENS_RAY_START_TIMEOUT`
    seconds, exit 2, and no process of that Ray left (GCS, raylet, reaper, agents)."""
    mark = os.urandom(8).hex()
    command = [sys.executable, "-c", HANG, "cohort", str(BENCH / "trajectories" / "psf__requests-1724"),
               "--engine", "ray", "--no-tables"]  # fmt: skip
    env = os.environ | {MARK: mark, "RAY_ADDRESS": "", "AGENTLENS_RAY_START_TIMEOUT": "8"}
    started = time.monotonic()
    proc = subprocess.Popen(
        command, cwd=ROOT, env=env | {"PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'src'}"},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        out, err = proc.communicate(timeout=120)
        took = time.monotonic() - started
        assert wait_for(lambda: not marked(mark), 30), f"left behind: {marked(mark)}"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        for pid in marked(mark):
            os.kill(pid, signal.SIGKILL)
    assert proc.returncode == 2 and out == "", err
    assert err.strip().splitlines() == [
        "error: engine 'ray': the local Ray did not start within 8 s (its raylet or GCS was lost "
        "or is stuck); its processes were stopped. Rerun, or use --engine processes:N"
    ]
    assert took < 60
