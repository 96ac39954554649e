"""Typed JSON decoding for readers: msgspec Structs that declare only the fields a reader uses.

Decoding into such a Struct skips every other field without building Python objects for it, which
is what keeps the large formats near the speed of a bare parse. Failures keep the contract of
`_json`: a `TraceError` naming the file and the line for broken JSON; lines of the wrong JSON type
are the caller's to skip or reject (`decode_lines` returns None for them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import msgspec

from agentlens.errors import SchemaError, TraceError
from agentlens.formats._json import ShapeError, blank, json_type, loads

T = TypeVar("T")
NULL = msgspec.Raw(b"null")
any_decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder()


def decode_lines(
    path: Path, data: bytes, format: str, decoder: msgspec.json.Decoder[T]
) -> list[tuple[int, T | None]]:
    """(line number, value) per non-blank JSONL line; a value of the wrong type is None."""
    if blank(data):
        raise TraceError(path, "empty file", format)
    try:  # one C call for the whole file; line numbers only matter when something is off
        values = decoder.decode_lines(data)
    except msgspec.DecodeError:
        return _line_by_line(path, data, format, decoder)
    if len(values) != data.count(b"\n") + (not data.endswith(b"\n")):
        return _line_by_line(path, data, format, decoder)  # blank lines: number them one by one
    return list(enumerate(values, start=1))


def _line_by_line(
    path: Path, data: bytes, format: str, decoder: msgspec.json.Decoder[T]
) -> list[tuple[int, T | None]]:
    values: list[tuple[int, T | None]] = []
    for number, line in enumerate(data.splitlines(), start=1):
        if not line or line.isspace():
            continue
        try:
            values.append((number, decoder.decode(line)))
        except msgspec.ValidationError:
            values.append((number, None))
        except msgspec.DecodeError as exc:
            raise TraceError(path, f"invalid JSON on line {number}: {exc}", format) from exc
    return values


def decode_document(path: Path, data: bytes, format: str, decoder: msgspec.json.Decoder[T]) -> T:
    """One JSON document as `decoder`'s type; broken JSON and wrong shapes name the file."""
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise SchemaError(path, str(exc), format) from exc
    except msgspec.DecodeError:
        loads(path, data, format)  # orjson's message says where the JSON broke
        raise


def decode_raw(raw: msgspec.Raw, decoder: msgspec.json.Decoder[T]) -> T | None:
    """A `Raw` value as `decoder`'s type, or None when it has another shape."""
    try:
        return decoder.decode(raw)
    except msgspec.ValidationError:
        return None


def token_count(value: Any, where: str) -> Any:
    """A token count as the readers always took it (`value or 0`, numbers kept as they are);
    a value that could never be summed (a string, a list) is a `ShapeError` naming `where`."""
    if isinstance(value, int | float) or not value:
        return value or 0
    raise ShapeError(f"{where} should be a number, found {json_type(value)}")


def listed(value: Any, where: str) -> list[Any]:
    """An optional array as the readers always took it (`value or []`); another truthy value
    (a number, an object) is a `ShapeError` naming `where`."""
    if isinstance(value, list):
        return value
    if not value:
        return []
    raise ShapeError(f"{where} should be an array, found {json_type(value)}")


class ReadGuard:
    """`with ReadGuard(path, format):` turns a `ShapeError` (a wrong-typed field) and a
    `RecursionError` (a value nested so deep that msgspec, `str()` or a walk overflows the
    stack) into one-line `SchemaError`s naming the file. A class, not `@contextmanager`: entering
    costs a fraction of a generator's, which shows on the tiny formats read per file."""

    __slots__ = ("format", "path")

    def __init__(self, path: Path, format: str) -> None:
        self.path = path
        self.format = format

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> None:
        if kind is None:
            return
        if issubclass(kind, ShapeError):
            raise SchemaError(self.path, str(exc), self.format) from None
        if issubclass(kind, RecursionError):
            message = "a JSON value is nested too deeply to read"
            raise SchemaError(self.path, message, self.format) from None
