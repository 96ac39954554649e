"""A list shown in one line: its first few items, then how many were left out; a long name cut
in its middle; a count of things, its noun plural unless there is one."""

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


NAME_CHARS = 160


def cut_name(name: str, limit: int = NAME_CHARS) -> str:
    """`name` whole up to `limit` characters; past it, its head and its tail (the file name)
    around how many were cut: a path the agent nested 1,500 folders deep made a reason of
    3,000 characters (`1 forbidden file changed: d/d/d/…`)."""
    if len(name) <= limit:
        return name
    keep = limit // 2
    return f"{name[:keep]}…[{len(name) - 2 * keep:,} characters cut]…{name[-keep:]}"


def counted(n: int, noun: str, many: str | None = None) -> str:
    """`n` and `noun`, plural unless `n` is 1: `1 run`, `0 runs`, `2 trajectories`, `3 passes`.
    The plural is `many` if given (a noun the English ending rules miss, or a phrase whose first
    word is the noun: `runs with a mechanism`), else made from the last word's ending. The
    digits are grouped, as every other count printed is: `10,452 step rows`."""
    return f"{n:,} {noun if n == 1 else many or _plural(noun)}"


def _plural(noun: str) -> str:
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    return noun + "s"
