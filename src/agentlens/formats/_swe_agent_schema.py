"""The fast path of the SWE-agent reader: `.traj` decoded by msgspec into Structs that skip what
the reader never reads, most of `history` (the chat sent to the model, which repeats the
trajectory's thoughts and observations): only each message's role and tool calls are built, and
the content of the leading system and user messages.

`typed_parts` returns None for anything but the common shape (a non-empty `trajectory` of
objects, `history` a list of objects, ASCII bytes); the reader then reads the file the generic way,
which gives the same result or the same error. `trajectory` entries are plain dicts either way
(they become `Step.raw`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import msgspec

PREAMBLE_ROLES = ("system", "user")


class _Message(msgspec.Struct):
    role: Any = None
    content: msgspec.Raw = msgspec.Raw(b"null")  # decoded for the preamble only
    tool_calls: Any = None


class _Document(msgspec.Struct):
    trajectory: Any = None
    history: list[_Message] | None = None
    info: Any = None
    replay_config: Any = None


_DOCUMENT = msgspec.json.Decoder(_Document)
_CONTENT = msgspec.json.Decoder()


class Parts(NamedTuple):
    """What the reader builds a trajectory from."""

    entries: list[dict[str, Any]]  # `trajectory[]`
    preamble: list[tuple[str, Any]]  # (role, content) of the messages before the first reply
    calls: list[Any]  # the first tool call (or None) of each assistant message in `history`
    info: Any
    replay_config: Any
    history: list[Any]  # the whole history as objects: read only for a history-only file


def typed_parts(data: bytes) -> Parts | None:
    # msgspec checks UTF-8 only in the strings it builds, orjson everywhere: ASCII needs neither
    if not data.isascii():
        return None
    try:
        doc = _DOCUMENT.decode(data)
    except msgspec.DecodeError:  # includes ValidationError: a shape the generic path judges
        return None
    entries = doc.trajectory
    if not isinstance(entries, list) or not entries:  # history-only, retry loops, errors
        return None
    if not all(isinstance(entry, dict) for entry in entries):
        return None
    history = doc.history or []
    preamble = []
    for message in history:
        if message.role not in PREAMBLE_ROLES:
            break
        preamble.append((message.role, _CONTENT.decode(message.content)))
    calls = [first_call(m.tool_calls) for m in history if m.role == "assistant"]
    return Parts(entries, preamble, calls, doc.info, doc.replay_config, [])


def first_call(calls: Any) -> dict[str, Any] | None:
    """The first of a message's `tool_calls`, when it is an object."""
    return calls[0] if isinstance(calls, list) and calls and isinstance(calls[0], dict) else None
