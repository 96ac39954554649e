"""Text from a trace or a shared store, made safe to print. A terminal obeys the escape codes in
what it is sent (clear the screen, retitle the window, hide or overwrite text, forge a link), and
rich passes ESC through, so each control character is printed as `\\xNN` instead."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def inert(text: str) -> str:
    """`text` with every C0/C1 control character (ESC, BEL, CR, newline…) as `\\xNN`."""
    return _CONTROL.sub(lambda found: f"\\x{ord(found.group()):02x}", text)
