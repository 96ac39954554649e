"""`Engine.map` on every engine: input order, failures as data, spec errors."""

from __future__ import annotations

import ast
import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from agentlens import errors
from agentlens.engine import UnitError, get_engine
from agentlens.engine.processes import parse_workers
from agentlens.engine.serial import SerialEngine
from agentlens.errors import ConfigError, MissingDependencyError
from agentlens.seams import Engine
from tests.conftest import BENCH, needed
from tests.engine.test_interrupt import wait_for
from tests.engine.units import (
    die_noting,
    exit_on_3,
    pid,
    reciprocal,
    slow_square,
    unpicklable,
    unpicklable_or_die,
)
from tests.process_group import finish_in_group

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["serial", "processes:2", "ray"])
def engine(request: pytest.FixtureRequest) -> Engine:
    if request.param == "serial":
        return SerialEngine()
    fixture = "processes" if request.param == "processes:2" else "ray_engine"
    result: Engine = request.getfixturevalue(fixture)
    return result


def test_map_keeps_input_order(engine: Engine) -> None:
    seen: list[int] = []
    outcomes = engine.map(slow_square, list(range(20)), on_done=lambda o: seen.append(o.index))
    assert [o.value for o in outcomes] == [x * x for x in range(20)]
    assert [o.index for o in outcomes] == list(range(20)) and sorted(seen) == list(range(20))


def test_a_failing_item_is_data_and_the_rest_are_kept(engine: Engine) -> None:
    outcomes = engine.map(reciprocal, [4, 2, 0, 1, 5], chunksize=2)
    assert [o.value for o in outcomes] == [0.25, 0.5, None, 1.0, 0.2]
    (failed,) = [o for o in outcomes if not o.ok]
    assert failed.index == 2 and str(failed.error) == "ZeroDivisionError: division by zero"
    assert failed.error is not None and "in reciprocal" in failed.error.traceback
    with pytest.raises((ZeroDivisionError, UnitError), match="division by zero"):
        failed.unwrap()


def test_empty_input(engine: Engine) -> None:
    assert engine.map(slow_square, []) == []


def test_pool_spreads_chunks_over_its_workers(processes: Engine) -> None:
    pids = {o.value for o in processes.map(pid, list(range(16)), chunksize=1)}
    assert processes.workers == 2 and len(pids) == 2 and os.getpid() not in pids


class MadeWhenTaken(Sequence[int]):
    """Items made as the engine takes them, counting how many are out and not yet done."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.made = 0
        self.done = 0
        self.most_out = 0

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: Any) -> Any:
        taken = range(self.count)[index]
        self.made += len(taken) if isinstance(taken, range) else 1
        self.most_out = max(self.most_out, self.made - self.done)
        return list(taken) if isinstance(taken, range) else taken


def test_the_pool_takes_items_a_few_at_a_time(processes: Engine) -> None:
    """A cohort's work units are made as the engine takes them: the pool sends a few chunks per
    worker ahead, so the units alive at once do not grow with the cohort."""
    from agentlens.engine.processes import IN_FLIGHT

    items = MadeWhenTaken(120)

    def done(_: object) -> None:
        items.done += 1

    outcomes = processes.map(slow_square, items, on_done=done, chunksize=1)
    assert [o.value for o in outcomes] == [x * x for x in range(120)]
    assert items.made == 120
    assert items.most_out <= processes.workers * IN_FLIGHT + 1


def test_ray_engine_runs_in_ray_workers(ray_engine: Engine) -> None:
    assert ray_engine.name == "ray" and ray_engine.workers == 2
    assert os.getpid() not in {o.value for o in ray_engine.map(pid, [1, 2, 3])}


@pytest.mark.parametrize("spec", ["bogus", "processes:0", "processes:two", "serial:3", "x.y:Z"])
def test_bad_spec_lists_the_choices(spec: str) -> None:
    with pytest.raises(ConfigError, match=r"processes") as info:
        get_engine(spec)
    assert spec in str(info.value)


def test_default_is_serial_unless_the_environment_says(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTLENS_ENGINE", raising=False)
    assert get_engine(None).name == "serial"
    monkeypatch.setenv("AGENTLENS_ENGINE", "bogus")
    with pytest.raises(ConfigError, match="unknown engine 'bogus'; choose one of: serial"):
        get_engine(None)


def test_a_dotted_path_names_an_engine_class() -> None:
    engine: Any = get_engine("agentlens.engine.serial:SerialEngine")
    assert isinstance(engine, SerialEngine) and isinstance(engine, Engine)


def test_missing_ray_names_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # makes `import ray` raise ImportError
    with pytest.raises(MissingDependencyError) as info:
        get_engine("ray")
    assert str(info.value) == "the Ray engine needs the 'ray' package: pip install 'agentlens[ray]'"


@pytest.mark.parametrize("name", ["processes", "ray_engine"])
def test_a_result_that_cannot_travel_fails_only_its_item(
    name: str, request: pytest.FixtureRequest
) -> None:
    engine: Engine = request.getfixturevalue(name)
    outcomes = engine.map(unpicklable, list(range(6)), chunksize=3)
    assert [o.value for o in outcomes if o.ok] == [0, 1, 3, 4, 5]
    (failed,) = [o for o in outcomes if not o.ok]
    assert failed.index == 2 and failed.error is not None
    assert str(failed.error) == "TypeError: cannot pickle '_thread.lock' object"


@pytest.mark.parametrize("chunksize", [1, 3])
def test_an_item_that_kills_its_worker_fails_alone(chunksize: int, tmp_path: Path) -> None:
    """Item 3 kills its worker (SIGKILL, as the OOM killer does): it is sent again on its own,
    kills a second worker, and fails; every other item is scored as serial scores it."""
    attempts = tmp_path / "attempts"
    with get_engine("processes:2") as engine:
        outcomes = engine.map(
            partial(die_noting, str(attempts)), list(range(12)), chunksize=chunksize
        )
        assert [o.value for o in engine.map(reciprocal, [2])] == [0.5]  # the pool goes on
        board = engine._board.path  # type: ignore[attr-defined]
    spared = [i for i in range(12) if i != 3]  # what serial gives for all but item 3
    assert [(o.index, o.value) for o in outcomes if o.ok] == list(zip(spared, spared, strict=True))
    (lost,) = [o for o in outcomes if not o.ok]
    assert lost.index == 3 and lost.error is not None and lost.error.type == "WorkerLostError"
    assert re.fullmatch(
        r"worker process \d+ was killed by SIGKILL \(out of memory\?\) running it, twice",
        lost.error.message,
    )
    pids = attempts.read_text().split()
    assert len(pids) == 2 and pids[0] != pids[1]  # run twice, in two workers
    assert not Path(board).exists()  # the workers' notes go with the pool


def test_a_death_and_a_result_that_cannot_travel_in_one_batch(processes: Engine) -> None:
    outcomes = processes.map(unpicklable_or_die, list(range(9)), chunksize=3)
    assert [o.value for o in outcomes if o.ok] == [0, 1, 3, 4, 6, 7, 8]
    assert [str(o.error).split(":")[0] for o in outcomes if not o.ok] == [
        "TypeError",
        "WorkerLostError",
    ]


def test_an_item_that_exits_its_worker_fails_alone_naming_the_code(processes: Engine) -> None:
    outcomes = processes.map(exit_on_3, list(range(10)))
    assert [o.index for o in outcomes if not o.ok] == [3]
    assert re.fullmatch(
        r"worker process \d+ exited with code 9 running it, twice", outcomes[3].error.message
    )  # type: ignore[union-attr]
    assert [o.value for o in outcomes if o.ok] == [i for i in range(10) if i != 3]
    assert [o.value for o in processes.map(slow_square, list(range(6)))] == [0, 1, 4, 9, 16, 25]


def test_workers_dying_on_every_item_stop_the_batch_after_a_bound(tmp_path: Path) -> None:
    """A machine where every item dies (out of memory): `WorkerLostError`, one line, once
    workers died on 9 different items (2 workers x 4 chunks in flight, plus one), nothing left
    running."""
    attempts = tmp_path / "attempts"
    script = (
        "from functools import partial\n"
        "from agentlens.engine import WorkerLostError, get_engine\n"
        "from tests.engine.units import die_noting_always, reciprocal\n"
        "if __name__ == '__main__':\n"
        "    with get_engine('processes:2') as engine:\n"
        "        try:\n"
        f"            engine.map(partial(die_noting_always, {str(attempts)!r}), list(range(40)))\n"
        "        except WorkerLostError as exc:\n"
        "            print(exc)\n"
        "        print(engine.map(reciprocal, [2])[0].value)\n"
    )
    out, err, left = run_alone(script)
    lines = out.splitlines()
    assert len(lines) == 2 and left == [], err
    assert re.fullmatch(
        r"worker process \d+ was killed by SIGKILL \(out of memory\?\); the batch was stopped: "
        r"workers died on 9 items in a row with nothing scored in between\. Rerun with fewer "
        r"workers \(--engine processes:N\) or serial",
        lines[0],
    )
    # 9 items blamed, each at most twice (8 of them may be re-run), 1 or 2 deaths per restart
    assert 9 <= len(attempts.read_text().split()) <= 2 * (9 + 8)
    assert lines[1] == "0.5"  # a fresh pool works
    assert "Traceback" not in err, err


def test_a_worker_killed_while_sending_its_result_costs_only_that_item() -> None:
    """Half a result in its pipe used to leave the pool waiting for the rest for ever: run in a
    process of its own, so a hang fails the test instead of the suite."""
    script = (
        "from agentlens.engine import get_engine\n"
        "from tests.engine.units import die_sending\n"
        "if __name__ == '__main__':\n"
        "    with get_engine('processes:2') as engine:\n"
        "        outcomes = engine.map(die_sending, list(range(8)), chunksize=1)\n"
        "        print([len(o.value) if o.ok else str(o.error) for o in outcomes])\n"
        "        print(len(engine.map(die_sending, [1])[0].value or b''))\n"
    )
    out, err, left = run_alone(script)
    lines = out.splitlines()
    assert len(lines) == 2 and left == [], err
    values = ast.literal_eval(lines[0])
    assert values[:3] + values[4:] == [100_000] * 7
    assert re.fullmatch(
        r"WorkerLostError: worker process \d+ was killed by SIGKILL \(out of memory\?\) "
        r"running it, twice",
        values[3],
    )
    assert lines[1] == "100000"
    assert "Traceback" not in err, err


def run_alone(script: str, timeout: float = 120) -> tuple[str, str, list[int]]:
    """`script`'s stdout and stderr, in a process group of its own, and the pids left in that
    group after it exited (killed, so that none outlives the test)."""
    return finish_in_group(fresh_python(script, new_session=True), timeout)


def test_ctrl_c_while_a_worker_is_sending_a_result_still_exits(tmp_path: Path) -> None:
    """The pool, stopped, left its manager thread waiting for the rest of that result, and the
    interpreter's exit waiting for that thread: a hang after "interrupted" (seen 1 run in 16 of
    `test_interrupt.py` on a loaded machine)."""
    stalled = tmp_path / "stalled"
    script = (
        "from functools import partial\n"
        "from agentlens.engine import get_engine\n"
        "from tests.engine.units import stall_sending\n"
        "if __name__ == '__main__':\n"
        "    engine = get_engine('processes:2')\n"
        "    try:\n"
        f"        engine.map(partial(stall_sending, {str(stalled)!r}), list(range(8)), chunksize=1)\n"
        "    except KeyboardInterrupt:\n"
        "        print('interrupted', flush=True)\n"
    )
    proc = fresh_python(script)
    try:
        deadline = time.monotonic() + 30
        while not stalled.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert stalled.exists(), "item 3 never stalled"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        if stalled.exists():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(stalled.read_text()), signal.SIGKILL)
    assert out == "interrupted\n" and proc.returncode == 0, err
    assert "Traceback" not in err, err


def fresh_python(script: str, new_session: bool = False) -> subprocess.Popen[str]:
    """`script` in a Python of its own that can import `tests` (its output piped): a hang
    there fails the test, not the suite."""
    return subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=os.environ | {"PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")])},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=new_session,
    )


def assert_ray_stays_quiet(
    capsys: pytest.CaptureFixture[str], since: float | None = None, wait: float = 3
) -> None:
    """Ray's driver reports a dead worker ("(raylet) A worker died...") from a thread of its own,
    moments after the batch stops (`since`): give it `wait` seconds, then check that nothing
    reached stdout and that no report of Ray's was passed on at all (without --debug)."""
    deadline = (time.monotonic() if since is None else since) + wait
    out = err = ""
    while not out and time.monotonic() < deadline:
        time.sleep(0.1)
        captured = capsys.readouterr()
        out, err = out + captured.out, err + captured.err
    assert out == "", out
    assert "(raylet)" not in err and "A worker died" not in err, err


@pytest.mark.parametrize("debug", [False, True])
def test_rays_own_reports_are_dropped_but_with_debug_and_a_workers_prints_kept(
    debug: bool, ray_engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    """Lines as Ray's driver prints them: from its error listener (pid "raylet": dropped, or on
    stderr with --debug) and, with `log_to_driver=True`, a worker's own (a numbered pid)."""
    from ray._private import worker as driver

    mark = uuid.uuid4().hex

    def printed(text: str) -> list[str]:
        return [line for line in re.sub(r"\x1b\[[0-9;]*m", "", text).splitlines() if mark in line]

    def forward(who: str | int, line: str) -> None:
        driver.print_to_stdstream(
            {"lines": [line], "pid": who, "is_err": False}, ignore_prefix=False
        )

    capsys.readouterr()
    errors.set_debug(debug)
    try:
        forward("raylet", f"A worker died or was killed while executing a task {mark}")
        forward("raylet", f"Raylet is terminated. Last 20 lines of the Raylet logs: {mark}")
        forward(4242, f"a print {mark}")
    finally:
        errors.set_debug(False)
    out, err = capsys.readouterr()
    assert printed(out) == [f"(pid=4242) a print {mark}"]
    reports = [
        f"(raylet) A worker died or was killed while executing a task {mark}",
        f"(raylet) Raylet is terminated. Last 20 lines of the Raylet logs: {mark}",
    ]
    assert printed(err) == (reports if debug else [])


def test_an_unreachable_ray_address_is_one_line_and_fast(tmp_path: Path) -> None:
    needed("ray")  # without it, the line is the install hint (tested elsewhere)
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "agentlens", "cohort", str(tmp_path)]
    started = time.monotonic()
    proc = subprocess.run(
        [*command, "--engine", f"ray:127.0.0.1:{port}"],
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ | {"RAY_ADDRESS": ""},
    )
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"error: engine 'ray:127.0.0.1:{port}': cannot reach a Ray cluster at 127.0.0.1:{port} "
        "(Connection refused); start one there with `ray start --head`, or check the address"
    ]
    assert time.monotonic() - started < 15


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_address_that_answers_but_is_not_ray_is_one_line_and_fast(tmp_path: Path) -> None:
    """An HTTP server there: `ray.init` alone would retry it for minutes."""
    needed("ray")
    port = free_port()
    web = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path,
    )  # fmt: skip
    try:
        assert _wait_listening(port), "the web server did not start"
        started = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "agentlens", "cohort", str(tmp_path), "--engine",
             f"ray:127.0.0.1:{port}"],
            capture_output=True, text=True, timeout=120, env=os.environ | {"RAY_ADDRESS": ""},
        )  # fmt: skip
    finally:
        web.kill()
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"error: engine 'ray:127.0.0.1:{port}': 127.0.0.1:{port} answers, but it is not a Ray "
        "cluster (no gRPC there); give the head node's GCS port (6379 by default) or "
        "ray://HOST:10001"
    ]
    assert time.monotonic() - started < 15


TOKEN = uuid.uuid4().hex + uuid.uuid4().hex


@pytest.fixture(scope="module")
def ray_head() -> Iterator[int]:
    """A head started with `ray start --head`, as a team's cluster would be, with token
    authentication (Ray's default for `ray start`). Joins happen in fresh processes: this one
    may already run a local Ray (the session fixture)."""
    needed("ray")
    port = free_port()
    # Not below pytest's temp folder: Ray's socket paths in it must fit a Unix socket name's 107
    # bytes, and under an xdist worker (`.../pytest-2050/popen-gw0/ray0/session_.../sockets/
    # plasma_store`) they did not: the head never listened
    temp = Path(tempfile.mkdtemp(prefix="ray-"))
    beside = Path(sys.executable).with_name("ray")  # this Python's Ray: a head must match it
    ray = str(beside) if beside.is_file() else "ray"
    head = subprocess.Popen(
        [ray, "start", "--head", "--block", f"--port={port}", "--node-ip-address=127.0.0.1",
         "--num-cpus=1", "--include-dashboard=false", "--disable-usage-stats",
         f"--temp-dir={temp}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        env=os.environ | {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": TOKEN},
    )  # fmt: skip
    try:
        assert _wait_listening(port, 120), "the Ray head did not start"  # slow on a busy machine
        yield port
        assert head.poll() is None  # engines that only joined it did not shut it down
    finally:
        os.killpg(head.pid, signal.SIGKILL)  # SIGTERM drains for 30 s
        head.wait(timeout=30)
        shutil.rmtree(temp, ignore_errors=True)


def join(port: int, token: str) -> subprocess.CompletedProcess[str]:
    script = (
        "from agentlens.engine import get_engine\n"
        "from tests.engine.units import reciprocal\n"
        f"with get_engine('ray:127.0.0.1:{port}') as engine:\n"
        "    print(engine.workers, [o.value for o in engine.map(reciprocal, [2, 4])])\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
        env=env | {"RAY_AUTH_TOKEN": token},
    )  # fmt: skip


def test_ray_address_joins_a_running_cluster_with_the_token_at_hand(ray_head: int) -> None:
    """No RAY_AUTH_MODE set: the engine sends the token it has."""
    proc = join(ray_head, TOKEN)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "1 [0.5, 0.25]"


def test_a_wrong_token_is_one_line_saying_so(ray_head: int, tmp_path: Path) -> None:
    command = [sys.executable, "-m", "agentlens", "cohort", str(tmp_path), "--engine",
               f"ray:127.0.0.1:{ray_head}"]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    proc = subprocess.run(
        command, capture_output=True, text=True, timeout=180,
        # Ray asks 20 times a second apart before it gives up; 3 say the same, sooner
        env=env | {"RAY_AUTH_TOKEN": "0" * 64, "RAY_gcs_server_port_wait_time_s": "3"},
    )  # fmt: skip
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"error: engine 'ray:127.0.0.1:{ray_head}': the cluster refused this driver's token; it "
        "needs the head's token (`ray get-auth-token` there) in RAY_AUTH_TOKEN or "
        "~/.ray/auth_token"
    ]


def test_sigterm_leaves_a_joined_cluster_running_none_of_our_tasks(
    ray_head: int, tmp_path: Path
) -> None:
    """No task is cancelled on a stop: leaving (`ray.shutdown`) ends our job, and the raylet
    kills the job's workers ("Killing leased worker because its job finished")."""
    noted = tmp_path / "pids"
    script = (
        "import signal, sys\n"
        "from functools import partial\n"
        "from agentlens import stop_signals\n"
        "from agentlens.engine import get_engine\n"
        "from tests.engine.units import sleep_noting\n"
        "stop_signals.take([signal.SIGTERM])\n"  # as every command does
        f"with get_engine('ray:127.0.0.1:{ray_head}') as engine:\n"
        f"    engine.map(partial(sleep_noting, {str(noted)!r}), [120] * 3, chunksize=1)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    driver = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True,
                              env=env | {"RAY_AUTH_TOKEN": TOKEN})  # fmt: skip
    try:
        assert wait_for(lambda: noted.is_file() and noted.read_text(), 120), "no task ran"
        driver.send_signal(signal.SIGTERM)
        _, err = driver.communicate(timeout=60)
    finally:
        driver.kill()
    assert driver.returncode == 143, err
    pids = [int(pid) for pid in noted.read_text().split()]
    assert wait_for(lambda: not any(_running(pid) for pid in pids), 15), pids


def _running(pid: int) -> bool:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"ray::run_chunk")
    return False


def _wait_listening(port: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.2)
    return False


def test_default_workers_follow_the_cpus_this_process_may_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _: {0}, raising=False)
    assert parse_workers(None) == 1 and parse_workers("3") == 3


def test_ray_auto_joins_only_the_cluster_named_in_ray_address(tmp_path: Path) -> None:
    needed("ray")
    command = [sys.executable, "-m", "agentlens", "cohort", str(tmp_path), "--engine", "ray:auto"]
    unnamed = subprocess.run(command, capture_output=True, text=True, timeout=120,
                             env={k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"})  # fmt: skip
    assert unnamed.returncode == 2, unnamed.stderr
    assert "joins the Ray cluster named in $RAY_ADDRESS, and none is set" in unnamed.stderr
    port = free_port()  # named, but nothing there: tried only because it was named
    named = subprocess.run(command, capture_output=True, text=True, timeout=120,
                           env=os.environ | {"RAY_ADDRESS": f"127.0.0.1:{port}"})  # fmt: skip
    assert named.returncode == 2, named.stderr
    assert f"cannot reach a Ray cluster at 127.0.0.1:{port}" in named.stderr


def test_plain_ray_starts_its_own_even_with_ray_address_set() -> None:
    needed("ray")
    task = BENCH / "trajectories" / "psf__requests-1724"
    port = free_port()  # a cluster named in the environment, unreachable: must not be tried
    done = subprocess.run(
        [sys.executable, "-m", "agentlens", "cohort", str(task), "--engine", "ray",
         "--protocol", "agentlens-bench", "--no-tables"],
        capture_output=True, text=True, timeout=600,
        env=os.environ | {"RAY_ADDRESS": f"127.0.0.1:{port}"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
