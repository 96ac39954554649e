"""Strict JSON helpers shared by readers: every failure names the file and where it broke."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from agentlens.errors import SchemaError, TraceError
from agentlens.formats._unfinished import cut_line, ends_early


def loads(path: Path, data: bytes, format: str) -> Any:
    if blank(data):
        raise TraceError(path, "empty file", format)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise TraceError(path, f"invalid JSON ({_truncation_hint(exc, data)})", format) from exc


def iter_jsonl(path: Path, data: bytes, format: str) -> Iterator[tuple[int, Any]]:
    """Yield (line number, value) for each non-blank line; a broken line names its number. A
    last line cut short is skipped when a batch read notes it (`_unfinished`)."""
    if blank(data):
        raise TraceError(path, "empty file", format)
    numbered = enumerate(lines(data), start=1)
    read_before = False
    for number, line in numbered:
        if not line or line.isspace():
            continue
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            hint = cut_line(path, number, line, rest=numbered, read_before=read_before)
            if hint is None:
                return
            message = f"invalid JSON on line {number}: {exc.msg}{hint}"
            raise TraceError(path, message, format) from exc
        read_before = True
        yield number, value


def lines(data: bytes) -> Iterator[bytes]:
    """`data.splitlines()`, one line at a time: a large file's lines are never all copied at
    once (`splitlines` makes a second copy of the whole file, as a list). A `LargeFile`
    (`load.read_path` hands large JSONL files so) is read a line at a time, so the file is
    never in memory whole."""
    if isinstance(data, LargeFile):
        found: Iterable[bytes] = data.lines()
    else:
        found = _parts(data)
    for line in found:
        if b"\r" in line:  # `\r\n` and a bare `\r` end lines too
            yield from line.splitlines()
        else:
            yield line


def _parts(data: bytes) -> Iterator[bytes]:
    start, size = 0, len(data)
    while start < size:
        end = data.find(b"\n", start)
        end = size if end < 0 else end
        yield data[start:end]
        start = end + 1


class LargeFile:
    """An open file as the readers that only walk its lines (`reads_lines`) take it: its size
    when opened, a part of it (`data[a:b]`) and its lines, each read from the file when asked.
    It was mapped (mmap) before: a file cut short while being read (`truncate`, a log rotated
    by copytruncate) killed the process with SIGBUS, without a line; read, it ends early, and
    `shrink_note` says so (a cut at a line's end left no other trace). A file that grows is
    read as it was when opened."""

    def __init__(self, handle: BinaryIO, size: int) -> None:
        self.handle = handle
        self.size = size
        self.shrunk_to: int | None = None
        """The file's size when a read of it came up short, if one did."""

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, part: slice) -> bytes:
        start, stop, _ = part.indices(self.size)
        found = os.pread(self.handle.fileno(), max(stop - start, 0), start)
        if len(found) < stop - start:
            self._shrunk()
        return found

    def lines(self) -> Iterator[bytes]:
        """Each line without its `\n`, up to the size the file had when it was opened. Through
        a 1 MiB buffer: 0.6 s a GiB, where the file's own 8 KiB one took 1.6 (mapped: 0.8)."""
        with open(os.dup(self.handle.fileno()), "rb", buffering=LINE_BUFFER) as reader:
            reader.seek(0)
            left = self.size
            while left > 0 and (line := reader.readline(left)):
                left -= len(line)
                yield line.removesuffix(b"\n")
        if left > 0:
            self._shrunk()

    def shrink_note(self) -> str | None:
        """A warning for the trajectories read, when the file was cut short while read: they
        stop where the file then ended, and nothing else need show it."""
        if self.shrunk_to is None:
            return None
        return f"file shrank from {self.size} to {self.shrunk_to} bytes while it was read"

    def _shrunk(self) -> None:
        self.shrunk_to = os.fstat(self.handle.fileno()).st_size


LINE_BUFFER = 1 << 20


def blank(data: bytes) -> bool:
    """`not data.strip()` without copying a large buffer: `isspace` stops at the first byte
    that is not whitespace (both use the same ASCII whitespace set)."""
    if isinstance(data, LargeFile):
        return not any(not data[i : i + 2**16].isspace() for i in range(0, len(data), 2**16))
    return not data or data.isspace()


def require(path: Path, format: str, value: Any, kind: type, what: str) -> Any:
    """Check a value's JSON type, raising a SchemaError that says what was expected."""
    if not isinstance(value, kind):
        raise SchemaError(
            path, f"{what} should be a {kind.__name__}, found {type(value).__name__}", format
        )
    return value


def _truncation_hint(exc: orjson.JSONDecodeError, data: bytes) -> str:
    # orjson's `pos` counts characters, not bytes: a file with non-ASCII text ends past it
    if ends_early(data):
        return f"file ends unexpectedly at byte {len(data.rstrip())}: truncated?"
    return f"{exc.msg} at line {exc.lineno}, column {exc.colno}"


def head_text(head: bytes) -> str:
    return head.lstrip(b"\xef\xbb\xbf").decode("utf-8", errors="replace").lstrip()


class ShapeError(Exception):
    """A value has the wrong JSON type, raised by helpers that do not know the file; the
    reader's `ReadGuard(path, format)` block turns it into a one-line `SchemaError`."""


class ReadGuard:
    """`with ReadGuard(path, format):` turns a `ShapeError` (a wrong-typed field) and a
    `RecursionError` (a value nested so deep that msgspec, `str()` or a walk overflows the
    stack) into one-line `SchemaError`s naming the file. With `loose=True` it does the same for
    TypeError, ValueError and OverflowError, for readers that convert values as they go (`int()`
    of a token count that is a list). A class, not `@contextmanager`: entering costs a fraction
    of a generator's, which shows on the tiny formats read per file."""

    __slots__ = ("format", "loose", "path")

    def __init__(self, path: Path, format: str, *, loose: bool = False) -> None:
        self.path = path
        self.format = format
        self.loose = loose

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
        if self.loose and issubclass(kind, TypeError | ValueError | OverflowError):
            message = f"a value has an unexpected type or size ({exc})"
            raise SchemaError(self.path, message, self.format) from exc


def obj(value: Any, where: str) -> dict[str, Any]:
    """An optional JSON object: absent (null) reads as `{}`, any other type is an error."""
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    raise ShapeError(f"{where} should be an object, found {json_type(value)}")


def arr(value: Any, where: str) -> list[Any]:
    """An optional JSON array: absent (null) reads as `[]`, any other type is an error."""
    if value is None:
        return []
    if isinstance(value, list):
        return value
    raise ShapeError(f"{where} should be an array, found {json_type(value)}")


def text(value: Any, where: str) -> str | None:
    """An optional string."""
    if value is None or isinstance(value, str):
        return value
    raise ShapeError(f"{where} should be a string, found {json_type(value)}")


def count(value: Any, where: str) -> int:
    """An optional whole number (a token count): absent reads as 0. A float with no fraction is
    accepted, since JSON parsers read integers beyond 64 bits as floats."""
    if type(value) is int:  # `type` not `isinstance`: a bool is not a count
        return value
    if value is None:
        return 0
    if type(value) is float and value.is_integer():
        return int(value)
    raise ShapeError(f"{where} should be a whole number, found {preview(value)}")


def json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, as users see it in the file."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def number(value: Any, where: str) -> float | None:
    """An optional number (a cost)."""
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise ShapeError(f"{where} should be a number, found {json_type(value)}")


def preview(value: Any, width: int = 40) -> str:
    """A short, safe rendering of a value for a message: scalars as their repr cut to `width`,
    containers by their JSON type (repr of a hostile 1000-deep list would overflow the stack)."""
    if isinstance(value, dict | list):
        return f"an {json_type(value)}"
    return f"{value!r:.{width}}"
