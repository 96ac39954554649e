"""Control characters from traces shown, not obeyed: an id, a model or a tool name holding
`ESC [2J` (clear the screen) or an OSC title sequence reaches the terminal as the text `\\x1b[2J`.
Rich's own styling and cursor control are untouched: they are not part of any text it prints."""

from __future__ import annotations

import re

from rich.console import Console, ConsoleOptions, ConsoleRenderable, RenderHook, RenderResult
from rich.segment import Segment

# C0 controls but tab and newline, DEL and the C1 controls (`\x9b` is a CSI on some terminals)
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


class _Visible:
    def __init__(self, renderable: ConsoleRenderable) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for segment in console.render(self.renderable, options):
            if segment.control or not _CONTROLS.search(segment.text):
                yield segment
            else:
                yield Segment(visible(segment.text), segment.style)


class VisibleControls(RenderHook):
    """A console's render hook: every renderable printed has its control characters shown."""

    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        return [_Visible(r) for r in renderables]


__all__ = ["VisibleControls", "visible"]
