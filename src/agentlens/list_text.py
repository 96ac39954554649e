"""A list shown in one line: its first few items, then how many were left out."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def first_few(
    items: Sequence[T], limit: int, name: Callable[[T], str] = str, sep: str = ", "
) -> str:
    """The first `limit` of `items`, each as `name` gives it, joined by `sep`, then
    ` (+k more)` for the k left out (nothing when none is): `a, b (+3 more)`."""
    more = len(items) - limit
    return sep.join(map(name, items[:limit])) + (f" (+{more} more)" if more > 0 else "")
