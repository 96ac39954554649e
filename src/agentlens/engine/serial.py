"""In-process engine, the default: no workers, no pickling, results as computed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from agentlens.engine._base import SPECS, EngineBase, OnDone, collect
from agentlens.engine.outcome import Outcome, run_chunk
from agentlens.errors import ConfigError

T = TypeVar("T")
R = TypeVar("R")


class SerialEngine(EngineBase):
    name = "serial"
    workers = 1

    def __init__(self, arg: str | None = None) -> None:
        if arg:
            raise ConfigError(
                f"engine 'serial:{arg}': serial takes no argument; choose one of: {SPECS}"
            )

    def map(
        self,
        fn: Callable[[T], R],
        items: Sequence[T],
        *,
        on_done: OnDone | None = None,
        chunksize: int | None = None,
    ) -> list[Outcome[R]]:
        batches = (run_chunk(fn, i, [item]) for i, item in enumerate(items))
        return collect(len(items), batches, on_done)
