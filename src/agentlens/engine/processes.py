"""Local process pool (`processes` = one worker per CPU, `processes:N`).

Workers come from a forkserver (a clean process, not a fork of a threaded parent) and ignore
SIGINT: on Ctrl-C the parent alone stops, cancels what is queued and terminates the workers.
While the pool is up, SIGTERM does the same (then exit 143), where it would otherwise kill the
parent alone and leave the forkserver and its workers running.

A chunk that cannot be sent or whose results cannot be sent back is retried an item at a time;
an item that still fails gets `Outcome.error`.

A worker that dies outright (killed by the OOM killer, a crash in a C extension, `os._exit`)
breaks the pool; so does one killed half-way through sending a result, which
`ProcessPoolExecutor` itself never notices (its manager thread waits for the rest). The batch
goes on: the broken pool is stopped (its workers terminated and joined), a new one started from
the same forkserver, and the chunks that were in flight and had not come back are sent again, an
item per chunk (results already received are kept). Each worker notes the index of the item it
is on in a file of its own (`_Board`), so the item a dead worker was running is known; sent again
on its own, an item that kills a worker a second time gets `Outcome.error` (`WorkerLostError`,
one line naming the signal or exit code) and the rest are scored as usual. Re-running an item is
safe because a unit here is a pure function of its item (scoring, reading); a unit with side
effects could see them twice. When workers die on more different items (or without an item to
blame) than the pool has chunks in flight, with nothing scored in between, the machine, not an
input, is at fault: the batch stops with `WorkerLostError`, one line, as it did on any death
before (`_Deaths`)."""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import forkserver, resource_tracker
from multiprocessing.context import BaseContext
from multiprocessing.reduction import ForkingPickler
from typing import Any, TypeVar

from agentlens import stop_signals
from agentlens.engine import _codec
from agentlens.engine._base import IN_FLIGHT, SPECS, DeathsInARow, EngineBase, OnDone, collect
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
Chunk = tuple[int, Sequence[Any]]


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


_note_fd: int | None = None
"""In a worker: its file on the board, where it notes the index of the item it is on."""


def _start_worker(board: str) -> None:
    global _note_fd
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _note_fd = os.open(os.path.join(board, str(os.getpid())), os.O_WRONLY | os.O_CREAT, 0o600)


def _run_noting(fn: Callable[[T], R], start: int, items: Sequence[T]) -> list[Outcome[R]]:
    """`run_chunk`, each item's index noted first: if the worker dies, the pool knows on what."""
    outcomes: list[Outcome[R]] = []
    for index, one in singles(start, items):
        if _note_fd is not None:
            os.pwrite(_note_fd, b"%20d" % index, 0)  # fixed width: overwrites the last whole
        outcomes += run_chunk(fn, index, one)
    return outcomes


class _Board:
    """A folder holding one file per worker of a pool, named by its pid: the index of the item
    that worker is on (a few bytes written per item; no lock, no pipe a death could leave dirty)."""

    def __init__(self) -> None:
        self.path = tempfile.mkdtemp(prefix="agentlens-pool-")

    def item_of(self, pid: int) -> int | None:
        try:
            with open(os.path.join(self.path, str(pid)), "rb") as note:
                return int(note.read())
        except (OSError, ValueError):  # died before its first item
            return None

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


class ProcessEngine(EngineBase):
    def __init__(self, arg: str | None = None) -> None:
        self.workers = parse_workers(arg)
        self.name = f"processes:{self.workers}"
        self._pool: ProcessPoolExecutor | None = None
        self._board: _Board | None = None
        self._sigterm: dict[signal.Signals, stop_signals.Handler] = {}
        ForkingPickler.register(Trajectory, _codec.reduce_trajectory)
        self._executor()

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = self._start_pool()
            self._sigterm = stop_signals.take([signal.SIGTERM])  # in a script: the workers go too
        return self._pool

    def _start_pool(self) -> ProcessPoolExecutor:
        global _live_pools
        _live_pools += 1
        self._board = _Board()
        pool = ProcessPoolExecutor(
            self.workers,
            mp_context=_context(),
            initializer=_start_worker,
            initargs=(self._board.path,),
        )
        # The workers start now, while the caller reads its input: started here, this
        # thread would wait for the forkserver to import the preloaded modules first.
        threading.Thread(target=_warm, args=(pool, self.workers), daemon=True).start()
        return pool

    def _restart(self) -> ProcessPoolExecutor:
        """A new pool in place of a broken one; the forkserver (and SIGTERM's handler) stay."""
        self._stop_pool()
        self._pool = self._start_pool()
        return self._pool

    def _stop_pool(self) -> bool:
        """Stop the pool now, no process of it left; False if there was none."""
        global _live_pools
        pool, self._pool = self._pool, None
        board, self._board = self._board, None
        if board is not None:
            board.remove()
        if pool is None:
            return False
        _stop_now(pool)
        del pool
        # The pool's semaphores unlink themselves when collected; collected after the resource
        # tracker has gone (it unlinks what it still tracks), they would print a traceback at exit.
        gc.collect()
        _live_pools -= 1
        return True

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
        parts: Iterator[Chunk],
    ) -> Iterator[list[Outcome[R]]]:
        """Each chunk's outcomes as it finishes; a chunk that failed to travel, item by item;
        after a worker's death, what was in flight, item by item from a new pool."""
        again: deque[Chunk] = deque()  # sent before new chunks: what a death left unfinished
        deaths = _Deaths(self.workers)
        while True:
            sent: dict[Future[list[Outcome[R]]], Chunk] = {}
            # The pool's own dict, not a copy: workers are started on demand, so the one that
            # dies may not exist yet when the batch starts.
            workers = getattr(pool, "_processes", None)
            if workers is None:  # not `or {}`: an empty dict is the live one too
                workers = {}
            try:
                for batch in self._chunks(pool, fn, parts, again, sent, workers):
                    deaths.scored(batch)
                    yield batch
                return
            except BrokenProcessPool as exc:  # from a future or from submitting to a broken pool
                broken = exc
            dead = _dead(workers)
            for batch in _finished(sent):  # came back before the death: kept
                deaths.scored(batch)
                yield batch
            board = self._board
            blamed = {board.item_of(pid) if board else None: (pid, code) for pid, code in dead}
            yield from deaths.died(_unfinished(sent), blamed, broken, again)
            pool = self._restart()

    def _chunks(
        self,
        pool: ProcessPoolExecutor,
        fn: Callable[[T], R],
        parts: Iterator[Chunk],
        again: deque[Chunk],
        sent: dict[Future[list[Outcome[R]]], Chunk],
        workers: dict[int, Any],
    ) -> Iterator[list[Outcome[R]]]:
        def send(count: int) -> None:  # chunks are made as they are sent: a few in flight
            for _ in range(count):
                chunk = again.popleft() if again else next(parts, None)
                if chunk is None:
                    return
                try:
                    sent[pool.submit(_run_noting, fn, chunk[0], chunk[1])] = chunk
                except BrokenProcessPool:
                    again.appendleft(chunk)
                    raise

        send(self.workers * IN_FLIGHT)
        while sent:
            done, _ = wait(sent, timeout=0.5, return_when=FIRST_COMPLETED)
            if not done and _any_exited(workers):
                # Killed while sending a result, a worker leaves the pool's manager thread
                # waiting for the rest of it, and the pool never sees the death itself.
                raise BrokenProcessPool("a worker process exited")
            split = 0  # a chunk that failed to travel goes again as singles, next
            for future in done:
                error = future.exception()
                if isinstance(error, BrokenProcessPool):
                    raise error  # left in `sent`: the caller sends it again
                start, part = sent.pop(future)
                if error is None:
                    yield future.result()
                elif len(part) == 1:
                    yield [failed(start, error)]
                else:
                    again.extendleft(reversed(list(singles(start, part))))
                    split += len(part) - 1
            send(len(done) + split)

    def _terminate(self) -> None:
        self._release_sigterm()
        if self._stop_pool():
            reap_helpers()

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
            _closed()
        if self._board is not None:
            self._board.remove()
            self._board = None
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


class _Deaths(DeathsInARow):
    """What the pool's deaths so far have cost: items blamed once (sent again on their own) and
    the deaths in a row (`DeathsInARow`: a task cut into pieces that all carry the same hostile
    trace, or bad traces side by side, may take all in flight). Each item is blamed at most
    twice, so a batch ends either way."""

    def __init__(self, workers: int) -> None:
        super().__init__(workers)
        self.blamed_once: set[int] = set()
        self.unblamed = 0

    def died(
        self,
        unfinished: list[Chunk],
        dead: dict[int | None, tuple[int, int]],
        broken: BrokenProcessPool,
        again: deque[Chunk],
    ) -> Iterator[list[Outcome[Any]]]:
        """The unfinished items queued in `again`, one per chunk, but for an item blamed a
        second time: failed. `WorkerLostError` when too many items in a row killed a worker.
        `dead` maps the item each dead worker was on (None: unknown) to its (pid, exit code)."""
        blamed = {index for index in dead if index is not None and _among(index, unfinished)}
        if not blamed:  # died between items, or before its first: nothing to blame
            self.unblamed += 1
        if self.too_many(blamed or {-self.unblamed}):  # item indexes are >= 0
            raise WorkerLostError(_stopped(list(dead.values()), self.limit)) from broken
        for start, part in unfinished:
            for index, one in singles(start, part):
                if index in blamed and index in self.blamed_once:
                    how = _how([dead[index]])
                    yield [failed(index, WorkerLostError(f"{how} running it, twice"))]
                else:
                    again.append((index, one))
        self.blamed_once |= blamed


def _among(index: int, chunks: list[Chunk]) -> bool:
    return any(start <= index < start + len(part) for start, part in chunks)


def _finished(sent: dict[Future[list[Outcome[R]]], Chunk]) -> list[list[Outcome[R]]]:
    return [future.result() for future in sent if future.done() and _came_back(future)]


def _unfinished(sent: dict[Future[list[Outcome[R]]], Chunk]) -> list[Chunk]:
    return [chunk for future, chunk in sent.items() if not (future.done() and _came_back(future))]


def _came_back(future: Future[Any]) -> bool:
    return not future.cancelled() and future.exception() is None


def _dead(workers: dict[int, Any]) -> list[tuple[int, int]]:
    """(pid, exit code) of each worker that died, as soon as one is known (its exit status may
    take a moment to arrive: the forkserver reports it, late on a loaded machine; waited for,
    briefly).

    The status is the pool's manager thread's to read: it joins every worker once the pool is
    broken, and a status read from here at the same moment leaves one of the two readers at
    end-of-file, for which CPython records exit code 255 (`Popen.poll` is not thread-safe): a
    SIGKILL read as "exited with code 255". So it is read from here only once the manager has
    had time and not done so (it waits, stuck on half a result, when a worker died sending one).
    """
    start = time.monotonic()
    while not (dead := _exited(workers, read=time.monotonic() - start > 1.5)):
        if time.monotonic() - start > 6:
            break
        time.sleep(0.01)
    return dead


def _how(dead: list[tuple[int, int]]) -> str:
    """One worker's death in words: its signal (or exit code) names the likely cause."""
    if not dead:
        return "a worker process died"
    pid, code = dead[0]
    if code >= 0:
        return f"worker process {pid} exited with code {code}"
    how = f"worker process {pid} was killed by {signal.Signals(-code).name}"
    return how + " (out of memory?)" if code == -signal.SIGKILL else how


def _stopped(dead: list[tuple[int, int]], limit: int) -> str:
    """The one line the CLI prints when the deaths stop the batch."""
    return (
        f"{_how(dead)}; the batch was stopped: workers died on {limit} items in a row"
        " with nothing scored in between. Rerun with fewer workers (--engine processes:N) or"
        " serial"
    )


def _exited(workers: dict[int, Any], *, read: bool) -> list[tuple[int, int]]:
    """(pid, exit code) of each worker that has exited, but for the pool's own SIGTERM; only
    codes already read (`read=False`), or read now."""
    codes = [(pid, _code(process, read)) for pid, process in list(workers.items())]
    return [(pid, code) for pid, code in codes if code is not None and code != -signal.SIGTERM]


def _code(process: Any, read: bool) -> int | None:
    if read:
        return process.exitcode
    popen = getattr(process, "_popen", None)  # what the last poll or join read, reading nothing
    return None if popen is None else popen.returncode


def _any_exited(workers: dict[int, Any]) -> bool:
    """Whether a worker has exited: its sentinel is readable (a select; its status is left for
    the pool's manager thread to read, see `_dead`)."""
    sentinels = [process.sentinel for process in list(workers.values())]
    return bool(sentinels) and bool(multiprocessing.connection.wait(sentinels, timeout=0))
