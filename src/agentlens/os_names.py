"""Text that no UTF-8 writer takes: lone surrogates. Python decodes the bytes of a file name that
is not UTF-8 to them (`surrogateescape`), and JSON, SQLite and a terminal all refuse them.
`printable` shows such bytes as `\\xNN`, so `run-\\xff.json` stays recognisable; `scrub` (the
store's last line of defence, for text of any origin) puts U+FFFD in their place."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def has_surrogates(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None


def scrub(text: str) -> str:
    """Each lone surrogate as U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def printable(text: str) -> str:
    """`text` with each byte that was not UTF-8 as `\\xNN` (any other lone surrogate as U+FFFD)."""
    if not has_surrogates(text):
        return text
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that did not come from a byte
        return scrub(text)
    return raw.decode("utf-8", "backslashreplace")


def printable_all(value: Any) -> Any:
    """`value` (JSON-like: dicts, lists, strings) with every string `printable`."""
    return map_strings(value, printable)


def scrubbed(value: Any) -> Any:
    """`value` (JSON-like) with every string `scrub`bed."""
    return map_strings(value, scrub)


def map_strings(value: Any, change: Callable[[str], str]) -> Any:
    """`value` (JSON-like: dicts, lists, strings) with `change` applied to every string, keys too."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {map_strings(k, change): map_strings(v, change) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [map_strings(v, change) for v in value]
    return value
