"""What the engines share: the context-manager protocol, putting outcomes back in order, and
when workers dying in a row stop a batch."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any, Self, TypeVar

from agentlens.engine.outcome import Outcome

R = TypeVar("R")

SPECS = "serial, processes, processes:N, ray, ray:auto, ray:ADDRESS"
OnDone = Callable[[Outcome[Any]], None]
IN_FLIGHT = 4
"""Chunks sent ahead per worker: enough to keep each busy, and only these exist at once when
the items are made as they are taken (a cohort's work units)."""


class EngineBase:
    name: str = ""
    workers: int = 1

    def close(self) -> None:
        """Release workers; the base has none."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} workers={self.workers}>"


def collect(
    n_items: int, batches: Iterable[list[Outcome[R]]], on_done: OnDone | None
) -> list[Outcome[R]]:
    """Outcomes in input order from chunks arriving in any order; `on_done` as each arrives."""
    slots: list[Outcome[R] | None] = [None] * n_items
    for batch in batches:
        for outcome in batch:
            slots[outcome.index] = outcome
            if on_done is not None:
                on_done(outcome)
    missing = [i for i, slot in enumerate(slots) if slot is None]
    if missing:
        raise RuntimeError(f"engine lost items {missing[:5]}")
    return [slot for slot in slots if slot is not None]


class DeathsInARow:
    """The different items (or chunks, or deaths with nothing to blame) that killed a worker
    since an item was last scored. At `limit` (one more than a pool keeps in flight: a death
    takes down all that is in flight, so each of those may have to kill a worker before the next
    item is scored) fresh items die too: the machine (memory), not an input, is at fault."""

    def __init__(self, workers: int) -> None:
        self.limit = workers * IN_FLIGHT + 1
        self.in_a_row: set[int] = set()

    def scored(self, batch: list[Outcome[Any]]) -> None:
        if any(outcome.ok for outcome in batch):
            self.in_a_row.clear()

    def too_many(self, lost: Iterable[int]) -> bool:
        """Count `lost` (item indexes, or negative keys of the caller's); the limit reached?"""
        self.in_a_row.update(lost)
        return len(self.in_a_row) >= self.limit
