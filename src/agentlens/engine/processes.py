"""Local process pool (`processes` = one worker per CPU, `processes:N`).

Workers come from a forkserver (a clean process, not a fork of a threaded parent) and ignore
SIGINT: on Ctrl-C the parent alone stops, cancels what is queued and terminates the workers."""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from multiprocessing.context import BaseContext
from multiprocessing.reduction import ForkingPickler
from typing import TypeVar

from agentlens.engine import _codec
from agentlens.engine._base import SPECS, EngineBase, OnDone, collect
from agentlens.engine.outcome import Outcome, chunk_size, chunks, run_chunk
from agentlens.errors import ConfigError
from agentlens.trajectory import Trajectory

T = TypeVar("T")
R = TypeVar("R")


def parse_workers(arg: str | None) -> int:
    if not arg:
        return os.cpu_count() or 1
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
        ForkingPickler.register(Trajectory, _codec.reduce_trajectory)
        self._executor()

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                self.workers, mp_context=_context(), initializer=_ignore_sigint
            )
            for _ in range(self.workers):  # start the workers now, while the caller reads input
                self._pool.submit(int)
        return self._pool

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
        futures = [pool.submit(run_chunk, fn, start, part) for start, part in chunks(items, size)]
        try:
            return collect(len(items), _as_completed(futures), on_done)
        except BaseException:
            self._terminate()
            raise

    def _terminate(self) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        # ProcessPoolExecutor has no public "stop now" before Python 3.14 (terminate_workers).
        processes = list(getattr(pool, "_processes", {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        for process in processes:
            process.join(timeout=5)

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def _as_completed(futures: list[Future[list[Outcome[R]]]]) -> Iterator[list[Outcome[R]]]:
    pending = set(futures)
    while pending:
        done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
        for future in done:
            yield future.result()
