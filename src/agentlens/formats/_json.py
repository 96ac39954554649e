"""Strict JSON helpers shared by readers: every failure names the file and where it broke."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from agentlens.errors import SchemaError, TraceError


def loads(path: Path, data: bytes, format: str) -> Any:
    if blank(data):
        raise TraceError(path, "empty file", format)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise TraceError(path, f"invalid JSON ({_truncation_hint(exc, data)})", format) from exc


def iter_jsonl(path: Path, data: bytes, format: str) -> Iterator[tuple[int, Any]]:
    """Yield (line number, value) for each non-blank line; a broken line names its number."""
    if blank(data):
        raise TraceError(path, "empty file", format)
    for number, line in enumerate(data.splitlines(), start=1):
        if not line or line.isspace():
            continue
        try:
            yield number, orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise TraceError(path, f"invalid JSON on line {number}: {exc.msg}", format) from exc


def blank(data: bytes) -> bool:
    """`not data.strip()` without copying a large buffer: `isspace` stops at the first byte
    that is not whitespace (both use the same ASCII whitespace set)."""
    return not data or data.isspace()


def require(path: Path, format: str, value: Any, kind: type, what: str) -> Any:
    """Check a value's JSON type, raising a SchemaError that says what was expected."""
    if not isinstance(value, kind):
        raise SchemaError(
            path, f"{what} should be a {kind.__name__}, found {type(value).__name__}", format
        )
    return value


def _truncation_hint(exc: orjson.JSONDecodeError, data: bytes) -> str:
    if exc.pos >= len(data.rstrip()) - 1:
        return f"file ends unexpectedly at byte {exc.pos}: truncated?"
    return f"{exc.msg} at line {exc.lineno}, column {exc.colno}"


def head_text(head: bytes) -> str:
    return head.lstrip(b"\xef\xbb\xbf").decode("utf-8", errors="replace").lstrip()
