"""Ray tasks (`ray` is an optional extra). Which Ray is always the user's explicit choice:

    ray           a new local Ray (one CPU per core), shut down by `close()`; never a running
                  cluster, whatever $RAY_ADDRESS says
    ray:ADDRESS   join the cluster at HOST:PORT or ray://HOST:PORT (its workers need agentlens)
    ray:auto      join the cluster named in $RAY_ADDRESS; without it, a one-line error (Ray's own
                  "auto" would also join any cluster found running on this machine)

Work units reach a local Ray's workers as references into this machine's files; a cluster's
workers, which may not see them, get the runs themselves (`local` is False).

A Ray already started in this process (`ray.init(...)` by the caller) is used as it is and left
running on `close()`; one this engine started is shut down by it.

As in `processes`: a chunk whose results cannot be sent back is retried an item at a time, and
an item that still fails gets `Outcome.error`. So does a worker that dies outright (killed, out
of memory, a crash): Ray starts workers anew by itself (`WorkerCrashedError` says which task was
lost), a chunk lost with its worker is sent again an item per task, an item that dies alone is
sent once more, and an item whose worker dies that second time too gets `Outcome.error`
(`WorkerLostError`; Ray does not say which signal or exit code). Re-running is safe because a
unit is a pure function of its item; tasks stay `max_retries=0` (see `_Losses`). Tasks lost on
`workers` x 4 + 1 chunks or items in a row with nothing scored in between (every item dies: the
machine is out of memory) stop the batch with `WorkerLostError`, one line; so does a node lost
(the raylet, the GCS), which takes all with it. `ray.init` is bounded (`ray_start.py`). An
ADDRESS that does not answer is a one-line `ConfigError` within `CONNECT_TIMEOUT` seconds, where
`ray.init` would retry for minutes.

Nothing of Ray's reaches this process's stdout, which is the command's output (`--json > out.json`),
and without `--debug` nothing reaches stderr but our own line: the reports Ray pushes to the
driver from its components (a dead worker, a retry, a lost raylet's last log lines and state
dump) are dropped, and go to stderr with `--debug` (see `_route_ray_reports`; once made, this
lasts for the process)."""

from __future__ import annotations

import importlib
import logging
import os
import re
import signal
import socket
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar
from urllib.parse import urlsplit

from agentlens import errors, stop_signals
from agentlens.engine import _codec
from agentlens.engine._base import DeathsInARow, EngineBase, OnDone, collect
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
from agentlens.engine.ray_start import init_within, stop_local
from agentlens.errors import ConfigError, MissingDependencyError
from agentlens.trajectory import Trajectory

T = TypeVar("T")
R = TypeVar("R")

CONNECT_TIMEOUT = 5.0
"""Seconds to wait for a cluster's address to accept a connection, then to answer, before giving
up."""
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
"""The client preface and an empty SETTINGS frame: a gRPC server (Ray's GCS, the Ray Client
server) answers with a SETTINGS frame of its own."""
SETTINGS_FRAME = 0x04
FIX = "Rerun with --engine processes:N (fewer workers) or serial, or give the Ray nodes more memory"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def import_ray() -> ModuleType:
    try:
        import ray
    except ImportError as exc:
        raise MissingDependencyError("the Ray engine", "ray", "ray") from exc
    return ray


def lost_errors(ray: ModuleType) -> tuple[type[BaseException], ...]:
    """Ray's errors for work lost with its worker or node (killed, out of memory, node gone),
    as against an error the work itself raised."""
    return worker_lost_errors(ray) + node_lost_errors(ray)


def worker_lost_errors(ray: ModuleType) -> tuple[type[BaseException], ...]:
    """Work lost with the one worker that ran it: its item may be at fault."""
    return (ray.exceptions.WorkerCrashedError, ray.exceptions.OutOfMemoryError)


def node_lost_errors(ray: ModuleType) -> tuple[type[BaseException], ...]:
    """Work lost with a whole node (its raylet, or the GCS): no item is at fault."""
    exceptions = ray.exceptions
    return (exceptions.NodeDiedError, exceptions.LocalRayletDiedError, exceptions.ObjectLostError)


class RayEngine(EngineBase):
    def __init__(self, address: str | None = None) -> None:
        address = _named_address(address)
        self.local = address is None
        _prepare_environment(address)
        self._ray = ray = import_ray()
        _route_ray_reports()
        self._started = not ray.is_initialized()
        self._sigterm: dict[signal.Signals, stop_signals.Handler] = {}
        self._stop: SystemExit | None = None
        self._shut_down = threading.Event()
        if self._started:
            self._shut_down = _connect(ray, address)
            # ray.init's own handlers (set when it runs in the main thread) dump a native stack
            # and exit 1, as if a file had failed
            self._sigterm = stop_signals.take_over([signal.SIGTERM, signal.SIGHUP], self._on_stop)
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.name = f"ray:{address}" if address else "ray"
        ray.util.register_serializer(Trajectory, serializer=_codec.pack, deserializer=_codec.unpack)
        self._task = ray.remote(max_retries=0)(run_chunk)
        self._worker_lost = worker_lost_errors(ray)
        self._node_lost = node_lost_errors(ray)

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
        except BaseException as exc:
            # Not on a stop (a signal, Ctrl-C) of a Ray this engine started or joined: `close`
            # ends its tasks (`ray.shutdown` ends our job, whose workers each raylet kills; a
            # local Ray is killed whole), and a stop is handled as Ray's `wait` returns, which
            # is when a result has just arrived: the race `cancel_unfinished` narrows.
            if not (self._started and isinstance(exc, SystemExit | KeyboardInterrupt)):
                self.cancel_unfinished(list(sent), force=True)
            if isinstance(exc, SystemExit) and self._stop is not None:
                raise self._stop from None  # what Ray's wait made of it: SystemExit(1)
            raise

    def cancel_unfinished(self, refs: list[Any], *, force: bool) -> None:
        """Cancel (`force`: kill the worker; else interrupt it) the tasks of `refs` whose
        results have not arrived. A task whose result is in needs no cancel, and gets none: Ray
        2.60's core takes a task whose result is arriving as not yet running and fails it, then
        completes it from the result and aborts the process (`task_manager.cc`, "Tried to
        complete task that was not pending")."""
        if not refs:
            return
        _, unfinished = self._ray.wait(refs, num_returns=len(refs), timeout=0, fetch_local=False)
        for ref in unfinished:
            self._ray.cancel(ref, force=force)

    def _on_stop(self, signum: int, frame: Any) -> None:
        self._stop = stop_signals.StopSignalExit(signum)
        raise self._stop

    def _as_completed(
        self, fn_ref: Any, sent: dict[Any, tuple[int, Sequence[Any]]]
    ) -> Iterator[list[Outcome[R]]]:
        """Each chunk's outcomes as it finishes; a chunk whose results failed or whose worker
        died, item by item."""
        lost = _Losses(self.workers)
        while sent:
            done, _ = self._ray.wait(list(sent), num_returns=1, timeout=0.5)
            for ref in done:
                start, part = sent.pop(ref)
                try:
                    outcomes: list[Outcome[R]] = self._ray.get(ref)
                except self._node_lost as exc:
                    raise WorkerLostError(_node_lost_line(exc)) from exc
                except self._worker_lost as exc:
                    if lost.again(exc, start, len(part)):
                        self._send_singles(fn_ref, start, part, sent)
                        continue
                    outcomes = [failed(start, WorkerLostError(_died_twice(exc)))]
                except Exception as exc:  # run_chunk keeps the unit's own errors: this is travel
                    if len(part) > 1:
                        self._send_singles(fn_ref, start, part, sent)
                        continue
                    outcomes = [_travel_failure(start, exc)]
                lost.scored(outcomes)
                yield outcomes

    def _send_singles(
        self, fn_ref: Any, start: int, part: Sequence[Any], sent: dict[Any, tuple[int, Any]]
    ) -> None:
        for index, one in singles(start, part):
            sent[self._task.remote(fn_ref, index, one)] = (index, one)

    def close(self) -> None:
        if self._started:
            if self._ray.is_initialized():
                self._ray.shutdown()
            if self.local:  # a raylet that died leaves its agents and workers running
                stop_local(self._ray)
        self._shut_down.set()
        self._started = False
        stop_signals.give_back(self._sigterm)
        self._sigterm = {}


def _named_address(address: str | None) -> str | None:
    """The cluster the user named: `ray:auto` is $RAY_ADDRESS, and only that."""
    if address in (None, "local"):
        return None
    if address != "auto":
        return address
    named = os.environ.get("RAY_ADDRESS", "").strip()
    if not named:
        raise ConfigError(
            "engine 'ray:auto' joins the Ray cluster named in $RAY_ADDRESS, and none is set; "
            "use 'ray' for a local Ray, or 'ray:HOST:PORT'"
        )
    return named


def _prepare_environment(address: str | None) -> None:
    """What Ray reads from the environment when it is imported, so before the import."""
    if address not in (None, "auto", "local"):
        _use_token_if_at_hand()


def _route_ray_reports() -> None:
    """Drop what Ray's driver prints for its own components (the raylet, GCS, autoscaler), or,
    with `--debug`, send it to stderr, never to stdout.

    Ray's driver runs a thread, `ray._private.worker.listen_error_messages`, that prints every
    error the cluster pushes to it ("(raylet) A worker died or was killed ...", "Task ... will be
    retried", a lost raylet's last 20 log lines and state dump: ~45 lines) through
    `print_to_stdstream` with `is_err=False`, so to `sys.stdout`. No `ray.init` argument,
    environment variable or config turns it off (`log_to_driver=False` only stops the workers'
    logs). That thread looks the function up at each message, so it is wrapped here, in place,
    which also covers a Ray already started by the caller. Output whose "pid" is a number (a
    worker's own prints, with `log_to_driver=True`) is the caller's and passes as it is."""
    try:
        worker = importlib.import_module("ray._private.worker")
    except ImportError:  # a Ray that moved it: nothing to wrap
        return
    original = getattr(worker, "print_to_stdstream", None)
    if original is None or getattr(original, "agentlens_wrapped", False):
        return

    def print_to_stdstream(data: dict[str, Any], ignore_prefix: bool = False) -> None:
        if not isinstance(data.get("pid"), str):  # a worker's own output
            original(data, ignore_prefix=ignore_prefix)
        elif errors.debug():
            original({**data, "is_err": True}, ignore_prefix=ignore_prefix)

    print_to_stdstream.agentlens_wrapped = True  # type: ignore[attr-defined]
    worker.print_to_stdstream = print_to_stdstream  # type: ignore[attr-defined]


def _connect(ray: ModuleType, address: str | None) -> threading.Event:
    """Start or join a Ray; the event is for `close` to set once Ray is shut down."""
    if address is not None:
        _check_reachable(address)

    def init() -> None:
        ray.init(
            address=address or "local",  # not None: that would follow $RAY_ADDRESS
            include_dashboard=False,
            logging_level=logging.ERROR,
            log_to_driver=False,
        )

    try:
        if address is None:
            return init_within(ray, init, local=True)
        with _native_stderr_held():
            return init_within(ray, init, local=False)
    except ConfigError:
        raise
    except Exception as exc:  # e.g. ray:auto, none running; a local Ray whose raylet was lost
        if _mentions(exc, "AuthenticationError"):
            raise ConfigError(
                f"engine 'ray:{address}': the cluster refused this driver's token; it needs the "
                "head's token (`ray get-auth-token` there) in RAY_AUTH_TOKEN or ~/.ray/auth_token"
            ) from exc
        message = " ".join(str(exc).split()) or type(exc).__name__
        where = f"ray:{address}" if address else "ray"
        raise ConfigError(f"engine '{where}': Ray did not start: {message}") from exc


@contextmanager
def _native_stderr_held() -> Iterator[None]:
    """Ray's C++ client logs each failed attempt to reach the cluster, once a second for 20 s,
    straight to file descriptor 2 (no log level stops it): hold that while connecting, since a
    failure ends in one line of ours that says what went wrong."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no stderr at all: nothing to hold
        yield
        return
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


def _use_token_if_at_hand() -> None:
    """`ray start --head` turns token authentication on by default (Ray 2.5x), and a driver then
    joins only in `RAY_AUTH_MODE=token`. With a token at hand and no mode set, send it: a
    cluster without authentication accepts it too."""
    if "RAY_AUTH_MODE" in os.environ:
        return
    token_file = os.environ.get("RAY_AUTH_TOKEN_PATH") or str(Path.home() / ".ray" / "auth_token")
    if os.environ.get("RAY_AUTH_TOKEN") or os.path.isfile(token_file):
        os.environ["RAY_AUTH_MODE"] = "token"


def _mentions(exc: BaseException, name: str) -> bool:
    """Whether `name` raised somewhere behind `exc`: Ray keeps the GCS client's last error only as
    text, a formatted traceback inside the message of the exception it chains."""
    seen: BaseException | None = exc
    for _ in range(20):  # a chain is short; the bound only guards against a cycle
        if seen is None:
            return False
        if type(seen).__name__ == name or name in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


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
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT) as sock:
            speaks_grpc = _speaks_grpc(sock)
    except OSError as exc:
        reason = "no answer" if isinstance(exc, TimeoutError) else exc.strerror or str(exc)
        raise ConfigError(
            f"engine 'ray:{address}': cannot reach a Ray cluster at {host}:{port} ({reason}); "
            "start one there with `ray start --head`, or check the address"
        ) from exc
    if not speaks_grpc:  # ray.init would retry it for minutes
        raise ConfigError(
            f"engine 'ray:{address}': {host}:{port} answers, but it is not a Ray cluster (no gRPC "
            "there); give the head node's GCS port (6379 by default) or ray://HOST:10001"
        )


def _speaks_grpc(sock: socket.socket) -> bool:
    """Whether the server answers an HTTP/2 preface with a SETTINGS frame. With Ray's TLS on
    (`RAY_USE_TLS`) the first bytes are a TLS handshake instead, so the probe is skipped."""
    if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
        return True
    reply = b""
    try:
        sock.sendall(HTTP2_PREFACE)
        while len(reply) < 9 and (chunk := sock.recv(9 - len(reply))):
            reply += chunk
    except OSError:  # a timeout or a reset: not a gRPC server either way
        return False
    return len(reply) == 9 and reply[3] == SETTINGS_FRAME


class _Losses(DeathsInARow):
    """Tasks lost with their worker: which items died alone once (sent again, once), and the
    chunks and items lost in a row (`DeathsInARow`; a chunk counts as -1 - its start). Each item
    goes alone at most twice, so a batch ends either way.

    The second run is sent here, not left to Ray's `max_retries`: with a retriable task in
    flight when the raylet is lost, Ray tries to rebuild the lost objects, and its core may end
    the driver (exit 1, "The connection to the plasma store is failed") before the loss is
    raised."""

    def __init__(self, workers: int) -> None:
        super().__init__(workers)
        self.died_alone: set[int] = set()

    def again(self, exc: BaseException, start: int, size: int) -> bool:
        """Whether the task lost (`size` items from `start`) goes again, an item per task; raises
        `WorkerLostError` once too many were lost in a row."""
        if self.too_many({start if size == 1 else -1 - start}):
            raise WorkerLostError(
                f"{_how(exc)}; the batch was stopped: Ray workers died on {self.limit} tasks or "
                f"items in a row with nothing scored in between. {FIX}"
            ) from exc
        if size > 1:
            return True
        first = start not in self.died_alone
        self.died_alone.add(start)
        return first


def _how(exc: BaseException) -> str:
    """Which way a worker was lost (Ray names no signal or exit code)."""
    if type(exc).__name__ == "OutOfMemoryError":
        return "Ray's memory monitor killed a worker (out of memory)"
    return "a Ray worker process died (killed, out of memory, a crash?)"


def _died_twice(exc: BaseException) -> str:
    return f"{_how(exc)} running it, twice"


def _node_lost_line(exc: BaseException) -> str:
    """The one line the CLI prints when a node lost stops the batch."""
    return f"a Ray node was lost ({type(exc).__name__}); the batch was stopped. {FIX}"


def _travel_failure(index: int, exc: BaseException) -> Outcome[Any]:
    """Item `index` as failed by `exc` from `ray.get`: the worker's own exception (e.g. a result
    that cannot be pickled) by its name, with the worker's traceback as Ray gives it."""
    cause = getattr(exc, "cause", None)
    if not isinstance(cause, BaseException):
        return failed(index, exc)
    text = _ANSI.sub("", str(exc)).strip()
    return Outcome(index, error=Failure(type(cause).__name__, str(cause), text), exception=cause)
