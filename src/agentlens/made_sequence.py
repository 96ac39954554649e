"""A sequence whose items are made from their keys only when asked for (an index, a slice or a
walk): how a large cohort is held without an object per run (refs, work units, rows)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Generic, TypeVar, overload

K = TypeVar("K")
T = TypeVar("T")


class MadeSequence(Sequence[T], Generic[K, T]):
    """`make(key)` for each of `keys`, in order, made when asked for and not kept."""

    def __init__(self, keys: Sequence[K], make: Callable[[K], T]) -> None:
        self.keys = keys
        self.make = make

    def __len__(self) -> int:
        return len(self.keys)

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self.make(key) for key in self.keys[index]]
        return self.make(self.keys[index])

    def __iter__(self) -> Iterator[T]:
        return map(self.make, self.keys)

    def __bool__(self) -> bool:
        return len(self.keys) > 0
