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
from agentlens.formats._unfinished import cut_line

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
    numbered = enumerate(data.splitlines(), start=1)
    for number, line in numbered:
        if not line or line.isspace():
            continue
        try:
            values.append((number, decoder.decode(line)))
        except msgspec.ValidationError:
            values.append((number, None))
        except msgspec.DecodeError as exc:
            hint = cut_line(path, number, line, rest=numbered, read_before=bool(values))
            if hint is None:
                break
            raise TraceError(path, f"invalid JSON on line {number}: {exc}{hint}", format) from exc
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


def scalar_text(value: Any, where: str) -> str | None:
    """An id, version or model name: a string or null as given, a number as its `str()` (the
    form other lookups use); a bool, an array or an object is a `ShapeError` naming `where`.
    Callers test `type(value) is str` inline first, so strings never pay for the call."""
    if value is None or type(value) is str:
        return value
    if type(value) is int or type(value) is float:
        return str(value)
    raise ShapeError(f"{where} should be a string, found {json_type(value)}")


def listed(value: Any, where: str) -> list[Any]:
    """An optional array as the readers always took it (`value or []`); another truthy value
    (a number, an object) is a `ShapeError` naming `where`."""
    if isinstance(value, list):
        return value
    if not value:
        return []
    raise ShapeError(f"{where} should be an array, found {json_type(value)}")
