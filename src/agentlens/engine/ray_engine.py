"""Ray tasks: `ray` starts a local Ray (one CPU per core), `ray:auto` or `ray:ADDRESS` joins a
running cluster (whose workers need agentlens installed). `ray` is an optional extra.

A Ray already started in this process (`ray.init(...)` by the caller) is used as it is and left
running on `close()`; one this engine started is shut down by it."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any, TypeVar

from agentlens.engine import _codec
from agentlens.engine._base import EngineBase, OnDone, collect
from agentlens.engine.outcome import Outcome, chunk_size, chunks, run_chunk
from agentlens.errors import MissingDependencyError
from agentlens.trajectory import Trajectory

T = TypeVar("T")
R = TypeVar("R")


def import_ray() -> ModuleType:
    try:
        import ray
    except ImportError as exc:
        raise MissingDependencyError("the Ray engine", "ray", "ray") from exc
    return ray


class RayEngine(EngineBase):
    def __init__(self, address: str | None = None) -> None:
        self._ray = ray = import_ray()
        self._started = not ray.is_initialized()
        if self._started:
            ray.init(
                address=address,
                include_dashboard=False,
                logging_level=logging.ERROR,
                log_to_driver=False,
            )
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.name = f"ray:{address}" if address else "ray"
        ray.util.register_serializer(Trajectory, serializer=_codec.pack, deserializer=_codec.unpack)
        self._task = ray.remote(run_chunk)

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
        fn_ref = self._ray.put(fn)  # once per map, not once per chunk
        size = chunk_size(len(items), self.workers, chunksize)
        refs = [self._task.remote(fn_ref, start, part) for start, part in chunks(items, size)]
        try:
            return collect(len(items), self._as_completed(refs), on_done)
        except BaseException:
            for ref in refs:
                self._ray.cancel(ref, force=True)
            raise

    def _as_completed(self, refs: list[Any]) -> Iterator[list[Outcome[R]]]:
        pending = list(refs)
        while pending:
            done, pending = self._ray.wait(pending, num_returns=1, timeout=0.5)
            for ref in done:
                yield self._ray.get(ref)

    def close(self) -> None:
        if self._started and self._ray.is_initialized():
            self._ray.shutdown()
        self._started = False
