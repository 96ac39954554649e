"""Trace, model or server text placed in a Markdown document (`review --md`, the step-value
`report.md`): shown as the text it is, never as HTML, a link, an image or a table-cell break,
whichever renderer opens the file."""

from __future__ import annotations

import html


def markdown_text(value: object) -> str:
    """`value` as literal Markdown text, safe inside a paragraph, a list item or a table cell."""
    escaped = html.escape(str(value), quote=False).replace("\\", "\\\\")
    for char in "[]|`":
        escaped = escaped.replace(char, f"\\{char}")
    return " ".join(escaped.splitlines())
