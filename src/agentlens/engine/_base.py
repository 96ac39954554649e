"""What the engines share: the context-manager protocol and putting outcomes back in order."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any, Self, TypeVar

from agentlens.engine.outcome import Outcome

R = TypeVar("R")

SPECS = "serial, processes, processes:N, ray, ray:auto, ray:ADDRESS"
OnDone = Callable[[Outcome[Any]], None]


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
