"""Picklable work units and a failure-injecting engine for the engine tests (workers import this
module, so everything here is top level)."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial
from multiprocessing.connection import Connection
from typing import Any

import msgspec

from agentlens.engine.processes import ProcessEngine
from agentlens.engine.ray_engine import RayEngine

FAIL_ON = "AGENTLENS_TEST_FAIL_ON"


def slow_square(x: int) -> int:
    """Later items finish first, so order must come from the engine, not from completion."""
    time.sleep(0.02 * (5 - x % 5))
    return x * x


def reciprocal(x: int) -> float:
    return 1 / x


def pid(_: object) -> int:
    time.sleep(0.05)
    return os.getpid()


def fail_on(marker: str, fn: Callable[[Any], Any], item: Any) -> Any:
    # a cohort's unit names its task; `score` sends runs by reference (a SpilledRun, its id)
    if marker in (getattr(item, "task_id", None), getattr(item, "id", None)):
        raise ValueError(f"injected failure for {marker}")
    return fn(item)


class FailingEngine(ProcessEngine):
    """`processes:2` whose unit raises in the worker for the item (task or trajectory id) named
    by $AGENTLENS_TEST_FAIL_ON; reachable as --engine tests.engine.units:FailingEngine."""

    def __init__(self) -> None:
        super().__init__("2")
        self.marker = os.environ[FAIL_ON]

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any], **kw: Any) -> list[Any]:
        return super().map(partial(fail_on, self.marker, fn), items, **kw)


def shape(value: Any) -> Any:
    """Every value with its exact type, nested (floats by repr, so NaN equals NaN; datetimes
    with their UTC offset): equal shapes mean the same value, type for type."""
    if isinstance(value, msgspec.Struct):
        fields = value.__struct_fields__
        return type(value).__name__, tuple((f, shape(getattr(value, f))) for f in fields)
    if isinstance(value, dict):
        return "dict", tuple((shape(k), shape(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return type(value).__name__, tuple(shape(v) for v in value)
    if isinstance(value, datetime):
        return "datetime", value.isoformat(), str(value.tzinfo)
    return type(value).__name__, repr(value)


def received(item: Any) -> Any:
    """The item as the worker received it, to compare with what was sent."""
    return shape(item)


def die(x: int) -> int:
    """Item 3 kills its worker outright, as the kernel's OOM killer does."""
    if x == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.05)
    return x


def exit_on_3(x: int) -> int:
    """Item 3 ends its worker with `os._exit(9)`, as a C extension that aborts does."""
    if x == 3:
        os._exit(9)
    time.sleep(0.05)
    return x


def signal_the_driver_on_5(driver: int, signum: int, x: int) -> int:
    """Item 5 signals the driver just before its result goes back, so that the driver handles
    the signal as Ray's `wait` returns for that result, as a stop mostly is."""
    if x == 5:
        os.kill(driver, signum)
    return x


def sleep_noting(path: str, seconds: float) -> float:
    """Note this worker's pid in `path`, then sleep: a task still running when its driver stops."""
    with open(path, "a") as out:
        out.write(f"{os.getpid()}\n")
    time.sleep(seconds)
    return seconds


def die_noting_always(path: str, x: int) -> int:
    """Every item kills its worker (a machine out of memory), its pid appended to `path` first."""
    with open(path, "a") as out:
        out.write(f"{os.getpid()}\n")
    os.kill(os.getpid(), signal.SIGKILL)
    return x


def _send_half_then(after: Callable[[], None]) -> None:
    """From now on this worker sends the first half of a message, then calls `after`."""
    send = Connection._send

    def half_then(self: Connection, buf: Any, *args: Any) -> None:
        send(self, bytes(buf)[: max(1, len(buf) // 2)])
        after()

    Connection._send = half_then  # type: ignore[method-assign]


def die_sending(x: int) -> bytes:
    """Item 3 is killed half-way through sending its result back: the pool's manager thread
    is left with half a message in the result pipe (the OOM killer can strike there too)."""
    if x == 3:
        _send_half_then(lambda: os.kill(os.getpid(), signal.SIGKILL))
    return b"r" * 100_000


def stall_sending(path: str, x: int) -> bytes:
    """Item 3 sends half of its result back, notes its pid in `path`, then hangs: what a Ctrl-C
    that stops the pool can catch a worker doing."""

    def note_and_hang() -> None:
        with open(path, "w") as out:
            out.write(str(os.getpid()))
        time.sleep(120)

    if x == 3:
        _send_half_then(note_and_hang)
    return b"r" * 100_000


def die_noting(path: str, x: int) -> int:
    """`die`, appending the worker's pid to `path` first: one line per attempt at item 3."""
    if x == 3:
        with open(path, "a") as out:
            out.write(f"{os.getpid()}\n")
    return die(x)


def unpicklable(x: int) -> Any:
    """Item 2 returns a value that cannot be sent back (a lock: neither pickle nor Ray's
    cloudpickle takes it); the others a plain int."""
    return threading.Lock() if x == 2 else x


def unpicklable_or_die(x: int) -> Any:
    """Item 2's result cannot be sent back; item 5 kills its worker."""
    if x == 5:
        os.kill(os.getpid(), signal.SIGKILL)
    return unpicklable(x)


class KillingEngine(ProcessEngine):
    """`processes:2` whose unit for the item named by $AGENTLENS_TEST_FAIL_ON kills its worker."""

    def __init__(self) -> None:
        super().__init__("2")
        self.marker = os.environ[FAIL_ON]

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any], **kw: Any) -> list[Any]:
        return super().map(partial(kill_on, self.marker, fn), items, **kw)


def kill_on(marker: str, fn: Callable[[Any], Any], item: Any) -> Any:
    # a cohort's unit names its task; `score` sends runs by reference (a SpilledRun, its id)
    if marker in (getattr(item, "task_id", None), getattr(item, "id", None)):
        os.kill(os.getpid(), signal.SIGKILL)
    return fn(item)


class RayKillingEngine(RayEngine):
    """The Ray engine (the session's Ray) whose unit for the item named by $AGENTLENS_TEST_FAIL_ON
    kills its worker."""

    def __init__(self) -> None:
        super().__init__(None)
        self.marker = os.environ[FAIL_ON]

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any], **kw: Any) -> list[Any]:
        return super().map(partial(kill_on, self.marker, fn), items, **kw)
