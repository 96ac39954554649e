"""The outcome of a batch of calls: results in order, and what was not done and why."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass
class BatchResult(Generic[T]):
    """Results in input order; `None` where an item was not done (see `not_done`, `errors`)."""

    results: list[T | None]
    not_done: list[int] = field(default_factory=list)
    errors: dict[int, str] = field(default_factory=dict)
    stopped_reason: str | None = None

    @property
    def complete(self) -> bool:
        return not self.not_done and not self.errors

    def summary(self) -> str:
        done = len(self.results) - len(self.not_done) - len(self.errors)
        text = f"{done} of {len(self.results)} done"
        if self.not_done:
            text += f"; not done (items {_ranges(self.not_done)})"
            if self.stopped_reason:
                text += f": {self.stopped_reason}"
        if self.errors:
            text += f"; {len(self.errors)} failed (items {_ranges(sorted(self.errors))})"
        return text


def _ranges(indices: list[int]) -> str:
    parts: list[str] = []
    start = prev = indices[0]
    for i in [*indices[1:], None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if i is not None:
            start = prev = i
    return ", ".join(parts)
