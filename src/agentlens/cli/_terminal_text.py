"""Text from traces reaches the terminal only as visible characters.

A trace can hold terminal escape sequences (an id, a model name or a command with `ESC ] 52`
writes the user's clipboard, `ESC ] 0` the window title, `ESC [ 2J` clears the screen, `ESC ] 8`
makes hidden links), C1 controls that some terminals read the same way, and bidirectional
overrides that show text in another order than it is (Trojan Source). Rich strips only a few
controls (BEL, backspace, CR, VT, FF), so every printed text segment goes through this hook and
`visible_text.visible`. Rich's own styles and cursor moves are not text and pass unchanged."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType, RenderHook
from rich.segment import Segment

from agentlens.visible_text import visible


class VisibleText(RenderHook):
    """Installed on a console with `console.push_render_hook(VisibleText())`."""

    def process_renderables(self, renderables: list[Any]) -> list[Any]:
        return [_Visible(r) for r in renderables]


class _Visible:
    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        segments: Iterable[Segment] = console.render(self.renderable, options)
        for text, style, control in segments:
            yield Segment(text if control else visible(text), style, control)
