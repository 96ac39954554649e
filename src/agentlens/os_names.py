"""File names that are not UTF-8. Python decodes their bytes to lone surrogates
(`surrogateescape`), which no UTF-8 writer takes: JSON, SQLite, a terminal. Shown instead with
those bytes as `\\xNN`, so `run-\\xff.json` stays recognisable and every writer takes it."""

from __future__ import annotations

import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def has_surrogates(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None


def printable(text: str) -> str:
    """`text` with each byte that was not UTF-8 as `\\xNN` (any other lone surrogate as U+FFFD)."""
    if not has_surrogates(text):
        return text
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that did not come from a byte
        return _SURROGATE.sub("\ufffd", text)
    return raw.decode("utf-8", "backslashreplace")


def printable_all(value: Any) -> Any:
    """`value` (JSON-like: dicts, lists, strings) with every string `printable`."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable_all(k): printable_all(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [printable_all(v) for v in value]
    return value
