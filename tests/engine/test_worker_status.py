"""Reading a dead worker's exit status from one thread only.

When a worker dies, the pool's manager thread joins every worker; `Popen.poll` is not
thread-safe, and a status read from the engine's thread at that moment leaves one reader at
end-of-file, which CPython records as exit code 255: a SIGKILL was reported as "exited with
code 255" (seen once in a loaded full suite, `test_an_item_that_kills_its_worker_fails_alone`).
The engine's checks must therefore read no status themselves, but see one another thread read.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
from typing import Any

import pytest

from agentlens.engine import processes


def _kill_self() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _counted_polls(process: Any) -> list[str]:
    """The names of the threads that call the process's `poll` from now on."""
    popen, calls = process._popen, []
    poll = popen.poll

    def counted(*args: Any) -> Any:
        calls.append(threading.current_thread().name)
        return poll(*args)

    popen.poll = counted
    return calls


def test_the_engine_sees_a_death_but_leaves_its_status_to_the_pool() -> None:
    process = multiprocessing.get_context("forkserver").Process(target=_kill_self)
    process.start()
    calls = _counted_polls(process)
    workers = {process.pid: process}
    multiprocessing.connection.wait([process.sentinel], timeout=30)
    assert processes._any_exited(workers)
    assert processes._exited(workers, read=False) == []  # nobody has read it yet
    assert calls == []  # neither check read the status
    manager = threading.Thread(target=process.join, name="manager")
    manager.start()
    manager.join(timeout=30)
    assert processes._exited(workers, read=False) == [(process.pid, -signal.SIGKILL)]
    assert calls and set(calls) == {"manager"}


@pytest.mark.parametrize("read", [False, True])
def test_a_status_no_thread_reads_is_read_by_the_engine_after_a_while(read: bool) -> None:
    """A manager stuck on half a result reads no status: `_dead` reads it itself (1.5 s on)."""
    process = multiprocessing.get_context("forkserver").Process(target=_kill_self)
    process.start()
    multiprocessing.connection.wait([process.sentinel], timeout=30)
    if read:
        process.join()
    assert processes._dead({process.pid: process}) == [(process.pid, -signal.SIGKILL)]
