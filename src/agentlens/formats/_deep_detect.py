"""Detection that does not depend on where a telltale key falls in the file.

Readers decide from the first 64 KiB, which holds the telltale keys of every format as its
writers order them, except when a large value comes first: mini-swe-agent writes `info.submission`
(the whole patch) before `info.mini_version`, and `trajectory_format` last. So when no reader
takes the head of a JSON file, detection reads on (bounded) and asks again: the first
`DETECT_LIMIT` bytes, then, for a longer file, its first and last 64 KiB together (a JSON
document's closing keys are at its end). A file no reader takes even so is unknown, and
`telltale` says whether it still looks like a trace, so a folder walk can name it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import BinaryIO

from agentlens.bounded_read import read_head
from agentlens.errors import UnknownFormatError
from agentlens.formats._unfinished import ends_early
from agentlens.formats.registry import HEAD_BYTES, detect
from agentlens.seams import TraceReader

DETECT_LIMIT = 16 * 1024 * 1024
TELLTALE = re.compile(
    rb'"(messages|message|steps|trajectory|history|events|role|tool_calls|toolCalls|tool_use'
    rb"|sessionUpdate|conversations|parentUuid|sessionId|sessionID|session_id)\"\s*:"
)
GENERIC = "not a known trace format"


def detect_in_file(path: Path, head: bytes, handle: BinaryIO) -> type[TraceReader]:
    """The reader for an open file whose first `HEAD_BYTES` are `head`."""
    try:
        return detect(path, head)
    except UnknownFormatError as exc:
        if len(head) < HEAD_BYTES or head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] not in (b"{", b"["):
            raise _with_telltale(_cut_short(exc, head, len(head) < HEAD_BYTES), head) from None
        first_error = exc
    handle.seek(0)
    more = handle.read(DETECT_LIMIT)
    for window in _windows(more, handle):
        try:
            return detect(path, window)
        except UnknownFormatError:
            continue
    whole = len(more) < DETECT_LIMIT
    raise _with_telltale(_cut_short(first_error, more, whole), more) from None


def _windows(more: bytes, handle: BinaryIO) -> list[bytes]:
    if len(more) < DETECT_LIMIT:
        return [more]
    handle.seek(-HEAD_BYTES, os.SEEK_END)
    return [more, more[:HEAD_BYTES] + handle.read()]


def _cut_short(error: UnknownFormatError, data: bytes, whole: bool) -> UnknownFormatError:
    """The error, saying so when the file is one JSON document that stops part way: the key
    that would have named its format may be in the part not yet written."""
    if not whole or not error.reason.startswith(GENERIC) or not ends_early(data):
        return error
    reason = f"{error.reason}; its JSON ends unexpectedly at byte {len(data.rstrip())}: truncated?"
    return UnknownFormatError(error.path, reason)


def _with_telltale(error: UnknownFormatError, data: bytes) -> UnknownFormatError:
    """The error, marked with the key that makes the file look like a trace (if it does and
    nothing more specific was said about it)."""
    if error.reason.startswith(GENERIC):
        found = TELLTALE.search(data)
        error.telltale = f'a "{found[1].decode()}" key' if found else None
    return error


def telltale_of(path: Path) -> str | None:
    """The trace-like key in the head of a JSON or JSONL file, read from disk (for sidecars)."""
    if path.suffix.lower() not in (".json", ".jsonl"):
        return None
    try:
        head = read_head(path, HEAD_BYTES)  # a FIFO or /proc/kmsg would be waited on for ever
    except OSError:
        return None
    found = TELLTALE.search(head)
    return f'a "{found[1].decode()}" key' if found else None
