"""Starting or joining a Ray within a bound, and leaving no process of a local Ray behind.

`ray.init` has waits of its own with no bound, or one longer than a user waits: a raylet lost
while the driver started left it waiting for over ten minutes, deaf to Ctrl-C (a wait in Ray's
own code, out of our reach). So `ray.init` runs in a thread of its own while the caller's thread
waits for it at most `START_TIMEOUT` seconds, still taking Ctrl-C and SIGTERM. A local Ray that fails to start, or does not start in time, is one `ConfigError` line,
and its processes are stopped: those `ray.init` started (GCS, raylet, reaper), and those its
raylet started (agents, workers), which a raylet that died leaves running on their own.

One end of a start cannot be caught here: when the raylet is already dead as the driver connects
to it, Ray's C++ core ends the whole process (exit 1, its own line on stderr)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from agentlens.errors import ConfigError

START_TIMEOUT = float(os.environ.get("AGENTLENS_RAY_START_TIMEOUT", "120"))
"""Seconds `ray.init` may take: Ray gives its raylet 30 s to register, a loaded machine needs
more for the rest (`AGENTLENS_RAY_START_TIMEOUT` to change)."""


def init_within(ray: ModuleType, init: Callable[[], None], local: bool) -> threading.Event:
    """Run `init` (a `ray.init` call) in a thread, waiting at most `START_TIMEOUT` seconds; a
    `local` Ray that did not start is stopped, every process of it, before this raises.

    The thread stays until the event returned is set, once Ray is shut down: Ray starts its GCS
    and raylet with a parent-death signal (`PR_SET_PDEATHSIG`), which Linux sends when the
    *thread* that started them ends."""
    outcome: list[BaseException | None] = []
    ready, done = threading.Event(), threading.Event()

    def run() -> None:
        try:
            init()
        except BaseException as exc:  # handed to the waiting thread, which raises it
            outcome.append(exc)
        else:
            outcome.append(None)
        ready.set()
        if outcome[0] is None:
            done.wait()

    try:
        threading.Thread(target=run, name="agentlens-ray-init", daemon=True).start()
        ready.wait(START_TIMEOUT)  # Ctrl-C and SIGTERM land here, not in Ray's C++ wait
    except BaseException:
        _give_up(ray, local, done)
        raise
    if outcome and outcome[0] is None:
        return done
    _give_up(ray, local, done)
    if not outcome:
        raise ConfigError(
            f"engine 'ray': the local Ray did not start within {START_TIMEOUT:.0f} s (its raylet "
            "or GCS was lost or is stuck); its processes were stopped. Rerun, or use --engine "
            "processes:N"
        )
    raise outcome[0]  # type: ignore[misc]  # not None: the start failed


def _give_up(ray: ModuleType, local: bool, done: threading.Event) -> None:
    if local:
        stop_local(ray)
    done.set()


def stop_local(ray: ModuleType) -> None:
    """Stop the local Ray this process started, and every process of it that is left: those Ray
    knows of, then any other process of Ray's that is a child of this one (its reaper, before
    Ray knows its node) or whose command line or open files name this session (the agents and
    workers of a raylet that died)."""
    node = getattr(getattr(ray, "_private", None), "worker", None)
    node = getattr(node, "_global_node", None)
    session = getattr(node, "session_name", None)
    if node is not None:
        with contextlib.suppress(Exception):  # half started: some of it may be missing
            node.kill_all_processes(check_alive=False, allow_graceful=False, wait=True)
    for pid in left_behind(session, Path(str(ray.__file__)).parent):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def left_behind(session: str | None, ray_dir: Path) -> list[int]:
    """Pids of the processes of this process's local Ray still running (Linux: /proc; elsewhere
    none are found)."""
    me = os.getpid()
    # Ray names a session after the time and the driver's pid: known before Ray says it
    named = re.compile(re.escape(session) if session else rf"session_[\d_-]+_{me}(?!\d)")
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            parent = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if proc.name == str(me) or not (cmdline.startswith("ray::") or str(ray_dir) in cmdline):
            continue
        if parent == me or named.search(cmdline) or _opened(proc, named):
            found.append(int(proc.name))
    return found


def _opened(proc: Path, named: re.Pattern[str]) -> bool:
    """Whether the process holds a file named by `named` open (an agent: its session's logs)."""
    with contextlib.suppress(OSError):
        for fd in (proc / "fd").iterdir():
            with contextlib.suppress(OSError):
                if named.search(os.readlink(fd)):
                    return True
    return False
