"""Text from a trace or a server shown as the characters it holds, never obeyed: C0 controls but
newline and tab as their Control Pictures (`␛` for ESC), C1 controls and the bidi embeddings,
overrides and isolates (Trojan Source) as U+FFFD. Used wherever such text meets a terminal: every
CLI console (`cli/_terminal_text.py`) and files a user may `cat` (the step-value `report.md`)."""

from __future__ import annotations

_VISIBLE = {code: 0x2400 + code for code in range(0x20) if chr(code) not in "\n\t"}
_VISIBLE[0x7F] = 0x2421  # ␡
_VISIBLE.update(dict.fromkeys(range(0x80, 0xA0), 0xFFFD))
_VISIBLE.update(dict.fromkeys([*range(0x202A, 0x202F), *range(0x2066, 0x206A)], 0xFFFD))


def visible(text: str) -> str:
    """`text` with every control and bidi override replaced by a visible stand-in."""
    return text.translate(_VISIBLE)


def one_line(text: str) -> str:
    """`text` with each newline as `␊`: for a name or id printed where one line is one thing (a
    `failed:` line, a trajectory's header), which a name holding a newline would forge. (The
    consoles' hook makes every other control visible, after layout.)"""
    return text.replace("\n", "\u240a")


_INLINE = {**_VISIBLE, ord("\n"): 0x240A, ord("\t"): 0x2409}


def inline(text: str) -> str:
    """`text` as one line of visible characters, newline and tab too (`␊`, `␉`): for a name set
    in a table cell or beside other fields (a run's label), measured as it will be shown."""
    return text.translate(_INLINE)


_JSON_ESCAPED = {code: f"\\u{code:04x}" for code in _VISIBLE if code >= 0x7F}


def json_text(document: bytes) -> str:
    """A JSON document for a terminal: JSON escapes C0 controls but leaves DEL, C1 controls and
    bidi overrides as they are; here they are `\\uXXXX` escapes too (they occur only inside
    strings, so the document decodes to the same value)."""
    return document.decode().translate(_JSON_ESCAPED)
