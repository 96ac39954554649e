"""What a work unit gives back: its value, or its failure as data (the batch goes on), and the
chunk runner every engine sends to its workers."""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from agentlens.errors import AgentLensError

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Failure:
    """An exception raised by a work unit, kept as text so it crosses process boundaries."""

    type: str
    message: str
    traceback: str

    def __str__(self) -> str:
        first = self.message.strip().splitlines()[0] if self.message.strip() else ""
        return f"{self.type}: {first}" if first else self.type


@dataclass(frozen=True)
class Outcome(Generic[R]):
    """The result of item `index` of a `map`: `value` when it ran, else `error`."""

    index: int
    value: R | None = None
    error: Failure | None = None
    exception: BaseException | None = field(default=None, compare=False, repr=False)
    """The exception itself, only in the process that ran the unit (never pickled)."""

    def __reduce__(self) -> tuple[type[Outcome[R]], tuple[int, R | None, Failure | None]]:
        return (Outcome, (self.index, self.value, self.error))

    @property
    def ok(self) -> bool:
        return self.error is None

    def unwrap(self) -> R:
        """The value; a failed unit re-raises its exception, or `UnitError` from another process."""
        if self.exception is not None:
            raise self.exception
        if self.error is not None:
            raise UnitError(self.index, self.error)
        return self.value  # type: ignore[return-value]


class UnitError(RuntimeError):
    """A work unit failed in a worker; the worker's traceback is in `failure.traceback`."""

    def __init__(self, index: int, failure: Failure) -> None:
        super().__init__(f"item {index}: {failure}")
        self.index = index
        self.failure = failure


class WorkerLostError(AgentLensError):
    """A worker process died outright (killed, out of memory): the error of the item it was
    running (the process pool), or raised when the batch is stopped (Ray; a pool whose workers
    keep dying)."""


def failed(index: int, exc: BaseException) -> Outcome[R]:
    """Item `index` as failed with `exc` (raised by the unit, or by sending it or its result)."""
    return Outcome(index, error=_failure(exc), exception=exc)


def run_chunk(fn: Callable[[T], R], start: int, items: Sequence[T]) -> list[Outcome[R]]:
    """Run `fn` on each item; an item's exception becomes its `Outcome.error`, not the chunk's."""
    outcomes: list[Outcome[R]] = []
    for offset, item in enumerate(items):
        try:
            outcomes.append(Outcome(start + offset, value=fn(item)))
        except Exception as exc:
            outcomes.append(failed(start + offset, exc))
    return outcomes


def _failure(exc: BaseException) -> Failure:
    text = "".join(traceback.format_exception(exc)).rstrip()
    return Failure(type(exc).__name__, str(exc), text)


def chunks(items: Sequence[T], size: int) -> Iterator[tuple[int, Sequence[T]]]:
    """(start index, slice) pairs of at most `size` items, in order."""
    for start in range(0, len(items), size):
        yield start, items[start : start + size]


def singles(start: int, part: Sequence[T]) -> Iterator[tuple[int, Sequence[T]]]:
    """A chunk that failed to travel, as one-item chunks: only the item at fault fails."""
    for offset, one in chunks(part, 1):
        yield start + offset, one


def chunk_size(n_items: int, workers: int, chunksize: int | None) -> int:
    """Four chunks per worker by default: few enough to keep overhead small, enough to balance."""
    if chunksize is not None:
        return max(1, chunksize)
    return max(1, -(-n_items // (workers * 4)))
