"""Real command output (a terminal recording from a Terminal-Bench run) with a key planted where a
cut falls, for the places that shorten text which may leave the machine: each must mask the text
before it cuts it (`redaction.masked_head` / `masked_tail`), or the part of the key it keeps goes
out too short for any detector to know."""

from __future__ import annotations

from functools import cache

from tests.conftest import FORMATS

AGENT_LOG = (
    FORMATS
    / "terminal-bench-leaderboard/terminal-bench-core@0.1.1/20250711_openhands_claude-4-sonnet"
    "/openhands-sonnet/fix-permissions/fix-permissions.1-of-1.openhands-sonnet/sessions/agent.log"
)
KEY = "sk-proj-Xy9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXcVbNm1234"
LEAD = "rotated, was "
INTO = 10
"""Characters of the key before the cut."""


@cache
def real_output() -> str:
    """The recording as a shell shows it: 1.7 MB, no secret in it."""
    return AGENT_LOG.read_bytes().decode().replace("\r\n", "\n").replace("\r", "\n")


def real_text(size: int) -> str:
    """`size` characters of the recording (repeated, when more is asked for)."""
    text = real_output()
    return (text * (size // len(text) + 1))[:size]


def key_at_head_cut(limit: int, after: int = 2000) -> str:
    """Real text whose character `limit` lies `INTO` characters into the key, `after` more
    characters of it after the key."""
    before = real_text(limit - INTO - len(LEAD))
    return f"{before}{LEAD}{KEY}\n{real_text(after)}"


def key_at_tail_cut(limit: int, before: int = 2000) -> str:
    """Real text whose last `limit` characters start `INTO` characters into the key: all of
    the key but its `sk-proj-Xy` would be kept."""
    after = "\n" + real_text(limit - (len(KEY) - INTO) - 1)
    return f"{real_text(before)}{LEAD}{KEY}{after}"


def kept_part_of_key(text: str) -> list[str]:
    """Pieces (8 characters or more) of the planted key that `text` still holds."""
    return [KEY[i : i + 8] for i in range(len(KEY) - 7) if KEY[i : i + 8] in text]


def real_bytes(size: int) -> bytes:
    """`size` bytes of the recording, no character split."""
    data = real_text(size).encode()[:size].decode(errors="ignore").encode()
    return data + b"\n" * (size - len(data))


def key_at_tail_cut_bytes(limit: int, before: int = 2000) -> bytes:
    """`key_at_tail_cut` for a cut counted in bytes (the kept end of a command's output)."""
    after = b"\n" + real_bytes(limit - (len(KEY) - INTO) - 1)
    return real_bytes(before) + f"{LEAD}{KEY}".encode() + after
