"""Ray tasks: `ray` starts a local Ray (one CPU per core), `ray:auto` or `ray:ADDRESS` joins a
running cluster (whose workers need agentlens installed). `ray` is an optional extra.

A Ray already started in this process (`ray.init(...)` by the caller) is used as it is and left
running on `close()`; one this engine started is shut down by it.

As in `processes`: a chunk whose results cannot be sent back is retried an item at a time, and
an item that still fails gets `Outcome.error`; a worker that dies outright (killed, out of
memory, its node lost) stops the batch with `WorkerLostError`, one line. Tasks are never retried
by Ray (`max_retries=0`): a unit that kills its worker would kill the next one too. An ADDRESS
that does not answer is a one-line `ConfigError` within `CONNECT_TIMEOUT` seconds, where
`ray.init` would retry for minutes."""

from __future__ import annotations

import logging
import re
import socket
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any, TypeVar
from urllib.parse import urlsplit

from agentlens.engine import _codec
from agentlens.engine._base import EngineBase, OnDone, collect
from agentlens.engine.outcome import (
    Failure,
    Outcome,
    WorkerLostError,
    chunk_size,
    chunks,
    failed,
    run_chunk,
    singles,
)
from agentlens.errors import ConfigError, MissingDependencyError
from agentlens.trajectory import Trajectory

T = TypeVar("T")
R = TypeVar("R")

CONNECT_TIMEOUT = 5.0
"""Seconds to wait for a cluster's address to accept a connection before giving up."""
FIX = "Rerun with --engine processes:N (fewer workers) or serial, or give the Ray nodes more memory"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


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
            _connect(ray, address)
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.name = f"ray:{address}" if address else "ray"
        ray.util.register_serializer(Trajectory, serializer=_codec.pack, deserializer=_codec.unpack)
        self._task = ray.remote(max_retries=0)(run_chunk)
        exceptions = ray.exceptions
        self._lost: tuple[type[BaseException], ...] = (
            exceptions.WorkerCrashedError,
            exceptions.OutOfMemoryError,
            exceptions.NodeDiedError,
            exceptions.LocalRayletDiedError,
            exceptions.ObjectLostError,
        )

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
        sent = {
            self._task.remote(fn_ref, start, part): (start, part)
            for start, part in chunks(items, size)
        }
        try:
            return collect(len(items), self._as_completed(fn_ref, sent), on_done)
        except BaseException:
            for ref in list(sent):
                self._ray.cancel(ref, force=True)
            raise

    def _as_completed(
        self, fn_ref: Any, sent: dict[Any, tuple[int, Sequence[Any]]]
    ) -> Iterator[list[Outcome[R]]]:
        """Each chunk's outcomes as it finishes; a chunk whose results failed, item by item."""
        while sent:
            done, _ = self._ray.wait(list(sent), num_returns=1, timeout=0.5)
            for ref in done:
                start, part = sent.pop(ref)
                try:
                    outcomes: list[Outcome[R]] = self._ray.get(ref)
                except self._lost as exc:
                    raise WorkerLostError(_lost_line(exc)) from exc
                except Exception as exc:  # run_chunk keeps the unit's own errors: this is travel
                    if len(part) == 1:
                        outcomes = [_travel_failure(start, exc)]
                    else:
                        for index, one in singles(start, part):
                            sent[self._task.remote(fn_ref, index, one)] = (index, one)
                        continue
                yield outcomes

    def close(self) -> None:
        if self._started and self._ray.is_initialized():
            self._ray.shutdown()
        self._started = False


def _connect(ray: ModuleType, address: str | None) -> None:
    if address not in (None, "auto", "local"):
        _check_reachable(address)
    try:
        ray.init(
            address=address,
            include_dashboard=False,
            logging_level=logging.ERROR,
            log_to_driver=False,
        )
    except (ConnectionError, TimeoutError, ValueError) as exc:  # e.g. ray:auto, none running
        message = " ".join(str(exc).split()) or type(exc).__name__
        raise ConfigError(f"engine 'ray:{address}': Ray did not start: {message}") from exc


def _check_reachable(address: str) -> None:
    """A one-line `ConfigError` unless `address` (host:port, ray://host:port) accepts a TCP
    connection within `CONNECT_TIMEOUT` seconds."""
    client = address.startswith("ray://")
    where = urlsplit(address if client else f"//{address}")
    try:
        host, port = where.hostname, where.port or (10001 if client else 6379)
    except ValueError as exc:
        raise ConfigError(f"engine 'ray:{address}': not a Ray address ({exc})") from exc
    if not host:
        raise ConfigError(f"engine 'ray:{address}': not a Ray address (use HOST:PORT)")
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT).close()
    except OSError as exc:
        reason = "no answer" if isinstance(exc, TimeoutError) else exc.strerror or str(exc)
        raise ConfigError(
            f"engine 'ray:{address}': cannot reach a Ray cluster at {host}:{port} ({reason}); "
            "start one there with `ray start --head`, or check the address"
        ) from exc


def _lost_line(exc: BaseException) -> str:
    """Which way the worker was lost, for the one line the CLI prints."""
    kind = type(exc).__name__
    if kind == "OutOfMemoryError":
        how = "Ray's memory monitor killed a worker (out of memory)"
    elif kind in ("NodeDiedError", "LocalRayletDiedError", "ObjectLostError"):
        how = "a Ray node was lost"
    else:
        how = "a Ray worker process died (killed, out of memory?)"
    return f"{how}; the batch was stopped. {FIX}"


def _travel_failure(index: int, exc: BaseException) -> Outcome[Any]:
    """Item `index` as failed by `exc` from `ray.get`: the worker's own exception (e.g. a result
    that cannot be pickled) by its name, with the worker's traceback as Ray gives it."""
    cause = getattr(exc, "cause", None)
    if not isinstance(cause, BaseException):
        return failed(index, exc)
    text = _ANSI.sub("", str(exc)).strip()
    return Outcome(index, error=Failure(type(cause).__name__, str(cause), text), exception=cause)
