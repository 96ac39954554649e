"""Picklable work units and a failure-injecting engine for the engine tests (workers import this
module, so everything here is top level)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from agentlens.engine.processes import ProcessEngine

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
