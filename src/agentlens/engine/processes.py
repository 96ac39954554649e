"""Local process pool (`processes` = one worker per CPU, `processes:N`).

Workers come from a forkserver (a clean process, not a fork of a threaded parent) and ignore
SIGINT: on Ctrl-C the parent alone stops, cancels what is queued and terminates the workers.
While the pool is up, SIGTERM does the same (then exit 143), where it would otherwise kill the
parent alone and leave the forkserver and its workers running.

A chunk that cannot be sent or whose results cannot be sent back is retried an item at a time;
an item that still fails gets `Outcome.error`. A worker that dies outright breaks the pool:
`WorkerLostError`, one line naming the signal; also one killed half-way through sending a result,
which `ProcessPoolExecutor` itself never notices (its manager thread waits for the rest)."""

from __future__ import annotations

import contextlib
import gc
import itertools
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import forkserver, resource_tracker
from multiprocessing.context import BaseContext
from multiprocessing.reduction import ForkingPickler
from typing import Any, TypeVar

from agentlens import stop_signals
from agentlens.engine import _codec
from agentlens.engine._base import SPECS, EngineBase, OnDone, collect
from agentlens.engine.outcome import (
    Outcome,
    WorkerLostError,
    chunk_size,
    chunks,
    failed,
    run_chunk,
    singles,
)
from agentlens.errors import ConfigError
from agentlens.trajectory import Trajectory

T = TypeVar("T")
R = TypeVar("R")
IN_FLIGHT = 4
"""Chunks sent ahead per worker: enough to keep each busy, and only these exist at once when
the items are made as they are taken (a cohort's work units)."""


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask: a container's limit), not the host's."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def parse_workers(arg: str | None) -> int:
    if not arg:
        return usable_cpus()
    if not arg.isdigit() or int(arg) < 1:
        raise ConfigError(
            f"engine 'processes:{arg}': N must be a whole number >= 1; choose one of: {SPECS}"
        )
    return int(arg)


# The scoring stack every batch job here runs; scipy alone takes ~0.45 s to import, so the
# forkserver imports it once and each worker is forked with it loaded.
PRELOAD = ["agentlens.trajectory", "agentlens.process.pta", "agentlens.process.score"]


def _context() -> BaseContext:
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class ProcessEngine(EngineBase):
    def __init__(self, arg: str | None = None) -> None:
        self.workers = parse_workers(arg)
        self.name = f"processes:{self.workers}"
        self._pool: ProcessPoolExecutor | None = None
        self._sigterm: dict[signal.Signals, stop_signals.Handler] = {}
        ForkingPickler.register(Trajectory, _codec.reduce_trajectory)
        self._executor()

    def _executor(self) -> ProcessPoolExecutor:
        global _live_pools
        if self._pool is None:
            _live_pools += 1
            self._pool = ProcessPoolExecutor(
                self.workers, mp_context=_context(), initializer=_ignore_sigint
            )
            # The workers start now, while the caller reads its input: started here, this
            # thread would wait for the forkserver to import the preloaded modules first.
            threading.Thread(target=_warm, args=(self._pool, self.workers), daemon=True).start()
            self._sigterm = stop_signals.take([signal.SIGTERM])  # in a script: the workers go too
        return self._pool

    def _release_sigterm(self) -> None:
        stop_signals.give_back(self._sigterm)
        self._sigterm = {}

    def map(
        self,
        fn: Callable[[T], R],
        items: Sequence[T],
        *,
        on_done: OnDone | None = None,
        chunksize: int | None = None,
    ) -> list[Outcome[R]]:
        if not items:
            return []
        pool = self._executor()
        size = chunk_size(len(items), self.workers, chunksize)
        try:
            return collect(len(items), self._run(pool, fn, chunks(items, size)), on_done)
        except BaseException:
            self._terminate()
            raise

    def _run(
        self,
        pool: ProcessPoolExecutor,
        fn: Callable[[T], R],
        parts: Iterator[tuple[int, Sequence[T]]],
    ) -> Iterator[list[Outcome[R]]]:
        """Each chunk's outcomes as it finishes; a chunk that failed to travel, item by item."""
        # The pool's own dict, not a copy: workers are started on demand, so the one that dies
        # may not exist yet when the batch starts.
        workers = getattr(pool, "_processes", None)
        if workers is None:  # not `or {}`: an empty dict is the live one too
            workers = {}
        try:
            yield from self._chunks(pool, fn, parts, workers)
        except BrokenProcessPool as exc:  # from a future or from submitting to a broken pool
            raise WorkerLostError(_lost(workers)) from exc

    def _chunks(
        self,
        pool: ProcessPoolExecutor,
        fn: Callable[[T], R],
        parts: Iterator[tuple[int, Sequence[T]]],
        workers: dict[int, Any],
    ) -> Iterator[list[Outcome[R]]]:
        sent: dict[Future[list[Outcome[R]]], tuple[int, Sequence[T]]] = {}

        def send(count: int) -> None:  # chunks are made as they are sent: a few in flight
            for start, part in itertools.islice(parts, count):
                sent[pool.submit(run_chunk, fn, start, part)] = (start, part)

        send(self.workers * IN_FLIGHT)
        while sent:
            done, _ = wait(sent, timeout=0.5, return_when=FIRST_COMPLETED)
            if not done and _any_exited(workers):
                # Killed while sending a result, a worker leaves the pool's manager thread
                # waiting for the rest of it, and the pool never sees the death itself.
                raise BrokenProcessPool("a worker process exited")
            for future in done:
                start, part = sent.pop(future)
                error = future.exception()
                if error is None:
                    yield future.result()
                elif isinstance(error, BrokenProcessPool):
                    raise error
                elif len(part) == 1:
                    yield [failed(start, error)]
                else:
                    for index, one in singles(start, part):
                        sent[pool.submit(run_chunk, fn, index, one)] = (index, one)
            send(len(done))

    def _terminate(self) -> None:
        self._release_sigterm()
        pool, self._pool = self._pool, None
        if pool is None:
            return
        _stop_now(pool)
        del pool
        # The pool's semaphores unlink themselves when collected; collected after the resource
        # tracker has gone (it unlinks what it still tracks), they would print a traceback at exit.
        gc.collect()
        _closed()

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
            _closed()
        self._release_sigterm()


def _warm(pool: ProcessPoolExecutor, workers: int) -> None:
    with contextlib.suppress(RuntimeError):  # shut down before it was warm: nothing to start
        for _ in range(workers):
            pool.submit(int)


def _stop_now(pool: ProcessPoolExecutor) -> None:
    # ProcessPoolExecutor has no public "stop now" before Python 3.14 (terminate_workers).
    processes = list(getattr(pool, "_processes", {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    results = getattr(pool, "_result_queue", None)  # `shutdown` drops its references
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(timeout=5)
    # A worker stopped while sending a result leaves half a message in the result pipe, and
    # the manager thread waits for the rest for ever (so does the interpreter's exit, which
    # joins that thread): with this, the last copy of the pipe's write end, closed, it reads
    # end-of-file instead, and winds the pool up as broken.
    if results is not None:
        results._writer.close()
    # Until its manager thread has gone, the pool's wake-up pipe may be closed by that thread
    # while the interpreter's exit hook writes to it: "Bad file descriptor" at exit.
    if manager is not None:
        manager.join(timeout=5)


def _closed() -> None:
    global _live_pools
    _live_pools -= 1
    reap_helpers()


_live_pools = 0
"""Pools open in this process: the forkserver and resource tracker are shared by all of them."""
REAP_WAIT = 5.0


def reap_helpers() -> None:
    """Stop the forkserver and the resource tracker, and wait for them (up to `REAP_WAIT` s
    each), once no pool of this process needs them: left alone they outlive the command by a
    moment (each exits when its pipe closes), so a shell or a test finds processes of a command
    that has returned. The next pool starts them again."""
    if _live_pools > 0:
        return
    server = forkserver._forkserver
    _stop(server, "_forkserver_alive_fd", "_forkserver_pid")
    address = getattr(server, "_forkserver_address", None)
    if address and getattr(server, "_forkserver_pid", 0) is None:
        server._forkserver_address = None  # type: ignore[attr-defined]
        with contextlib.suppress(OSError, TypeError):
            os.unlink(address)
    _stop(resource_tracker._resource_tracker, "_fd", "_pid")


def _stop(helper: Any, fd_name: str, pid_name: str) -> None:
    """Close the helper's pipe, which tells it to exit, and reap it; a helper that is still
    held open by another process (and so does not exit) is left running, not waited on."""
    lock = getattr(helper, "_lock", None) or contextlib.nullcontext()
    with lock:
        fd, pid = getattr(helper, fd_name, None), getattr(helper, pid_name, None)
        if fd is None or pid is None:
            return
        with contextlib.suppress(OSError):
            os.close(fd)
        setattr(helper, fd_name, None)
        deadline = time.monotonic() + REAP_WAIT
        while time.monotonic() < deadline:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:  # not ours to wait for, or already reaped
                done = pid
            if done:
                setattr(helper, pid_name, None)
                return
            time.sleep(0.01)


def _lost(workers: dict[int, Any]) -> str:
    """Which worker died and how, for the one line the CLI prints (its exit status may take a
    moment to arrive: the forkserver reports it, late on a loaded machine; waited for, briefly)."""
    deadline = time.monotonic() + 6
    while not (dead := _killed(workers)) and time.monotonic() < deadline:
        time.sleep(0.01)
    how = "a worker process died"
    if dead:
        pid, signum = dead[0]
        how = f"worker process {pid} was killed by {signal.Signals(signum).name}"
        if signum == signal.SIGKILL:
            how += " (out of memory?)"
    return (
        f"{how}; the batch was stopped. Rerun with fewer workers (--engine processes:N) or serial"
    )


def _killed(workers: dict[int, Any]) -> list[tuple[int, int]]:
    """(pid, signal) of each worker killed by a signal other than the pool's own SIGTERM."""
    return [
        (pid, -process.exitcode)
        for pid, process in list(workers.items())
        if process.exitcode is not None and process.exitcode < 0
        and process.exitcode != -signal.SIGTERM  # the pool stops the others with SIGTERM
    ]  # fmt: skip


def _any_exited(workers: dict[int, Any]) -> bool:
    return any(process.exitcode is not None for process in list(workers.values()))
