"""Session logs of agents AgentLens has no reader for, which look like one it has.

Qwen Code and Factory's Droid write Claude-Code-like JSONL (`sessionId`, `parentUuid`, a
`subtype: init` line, `message` objects), so the Claude Code reader would claim them and find no
steps. Detection asks this table first, so such a file is named for what it is and reported as
an unread trace instead of becoming an empty trajectory. Each signature is checked on the first
complete lines of the file (parsed, not searched), from the public formats:
* Qwen Code `~/.qwen/projects/<p>/chats/<session>.jsonl`: `ChatRecord` lines whose `message` is a
  Gemini-style `{role, parts}` content, `type: tool_result` with `toolCallResult`, `usageMetadata`;
* Droid `~/.factory/sessions/<p>/<id>.jsonl`: a `type: session_start` line (`title`, `owner`), and
  `droid exec --output-format stream-json`: `tool_call` (`toolName`), `completion` (`finalText`);
* opencode `run --format json`: `{type, timestamp, sessionID, part}` events.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any

import orjson

LINES_CHECKED = 20
Line = dict[str, Any]


_LINE_END = re.compile(rb"\r\n?|\n")


def first_lines(head: bytes, count: int) -> Iterator[bytes]:
    """`head.splitlines()[:count]`, without splitting the rest of the head (64 KiB: most of
    detection's cost for a pretty-printed file whose first line is `{`)."""
    start = 0
    for end in islice(_LINE_END.finditer(head), count):
        yield head[start : end.start()]
        start, count = end.end(), count - 1
    if count and start < len(head):
        yield head[start:]


def _qwen(line: Line) -> bool:
    message = line.get("message")
    parts = isinstance(message, dict) and isinstance(message.get("parts"), list)
    if "uuid" in line and "sessionId" in line and parts:
        return True
    return ("toolCallResult" in line and line.get("type") == "tool_result") or (
        "usageMetadata" in line and "sessionId" in line
    )


def _droid(line: Line) -> bool:
    kind = line.get("type")
    if kind == "session_start":
        return "owner" in line or "title" in line
    return (kind == "tool_call" and "toolName" in line) or (
        kind == "completion" and "finalText" in line
    )


def _opencode(line: Line) -> bool:
    return isinstance(line.get("sessionID"), str) and isinstance(line.get("part"), dict)


SIGNATURES: tuple[tuple[str, Callable[[Line], bool]], ...] = (
    ("a Qwen Code session log (Claude-Code-like JSONL)", _qwen),
    ("a Factory Droid session log (Claude-Code-like JSONL)", _droid),
    ("an opencode `run --format json` event log", _opencode),
)


def lookalike(head: bytes) -> str | None:
    """Why the file is a trace no reader takes, when its first lines match a known signature."""
    if head.lstrip()[:1] != b"{":
        return None
    for raw in first_lines(head, LINES_CHECKED):
        try:
            line = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return None  # not JSONL (a pretty-printed document, or the head's cut last line)
        if not isinstance(line, dict):
            continue
        for what, matches in SIGNATURES:
            if matches(line):
                return f"{what}: no reader for it yet"
    return None
