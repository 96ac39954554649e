"""HTML building blocks. Every piece of text from a trace or a result is hostile: it goes through
`esc` (text and attribute values alike), and tables take plain values or `Cell`s, never markup."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agentlens.report.style import CSS

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


_CONTROL = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""Control characters, which HTML does not allow in a document (a browser drops or replaces them
unseen, and U+0000 makes tools such as grep call the file binary), and the bidi embeddings,
overrides and isolates, which would show a command in another order than it runs: shown as
U+FFFD."""


def esc(value: object) -> str:
    return html.escape(_CONTROL.sub("\ufffd", "" if value is None else str(value)), quote=True)


def attrs(**values: object) -> str:
    """` name="value"` pairs, escaped; a trailing `_` lets Python keywords through (`class_`)."""
    return "".join(
        f' {name.rstrip("_").replace("_", "-")}="{esc(value)}"'
        for name, value in values.items()
        if value is not None
    )


def el(name: str, inner: str = "", **attributes: object) -> str:
    """An element around `inner`, which must already be markup built by these helpers."""
    return f"<{name}{attrs(**attributes)}>{inner}</{name}>"


def text(name: str, value: object, **attributes: object) -> str:
    """An element holding escaped text."""
    return el(name, esc(value), **attributes)


@dataclass(frozen=True)
class Cell:
    value: object
    title: str | None = None
    """Shown as a tooltip: the reason behind a number."""
    class_: str | None = None


def fmt(value: object, digits: int = 1) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return str(value)


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "–"


def _cell(tag: str, cell: object) -> str:
    if not isinstance(cell, Cell):
        cell = Cell(cell)
    numeric = isinstance(cell.value, int | float) and not isinstance(cell.value, bool)
    classes = " ".join(c for c in (cell.class_, "num" if numeric else None) if c) or None
    return text(tag, fmt(cell.value), title=cell.title, class_=classes)


def table(
    head: Sequence[str], rows: Iterable[Sequence[object]], *, caption: str = "",
    class_: str | None = None,
) -> str:  # fmt: skip
    header = el("tr", "".join(text("th", h) for h in head))
    body = "".join(el("tr", "".join(_cell("td", c) for c in row)) for row in rows)
    cap = text("caption", caption) if caption else ""
    inner = cap + el("thead", header) + el("tbody", body)
    return el("div", el("table", inner, class_=class_), class_="scroll")


def definitions(pairs: Iterable[tuple[str, object]]) -> str:
    return el("dl", "".join(text("dt", k) + text("dd", fmt(v)) for k, v in pairs))


def figure(svg: str, caption: str) -> str:
    return el("figure", svg + text("figcaption", caption))


def stat_cards(cards: Iterable[tuple[str, str] | tuple[str, str, str]]) -> str:
    """Big numbers: (label, value) or (label, value, a class for the card)."""
    inner = "".join(
        el("div", text("div", card[1], class_="value") + text("div", card[0], class_="label"),
           class_=card[2] if len(card) > 2 else None)
        for card in cards
    )  # fmt: skip
    return el("div", inner, class_="cards")


def section(title: str, inner: str, *, anchor: str | None = None, level: int = 2) -> str:
    return el("section", text(f"h{level}", title) + inner, id=anchor)


def details(summary: str, inner: str, *, open_: bool = False) -> str:
    return f"<details{' open' if open_ else ''}>{text('summary', summary)}{inner}</details>"


def page(title: str, subtitle: str, contents: Sequence[tuple[str, str]], body: str) -> str:
    """The whole document; `contents` is (anchor, title) for the table of contents."""
    toc = el("ol", "".join(el("li", text("a", t, href=f"#{a}")) for a, t in contents))
    head = (
        '<meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"{text('title', title)}<style>{CSS}</style>"
    )
    header = el("header", text("h1", title) + text("p", subtitle, class_="subtitle"))
    nav = el("nav", text("h2", "Contents") + toc) if len(contents) > 1 else ""
    return f'<!DOCTYPE html>\n<html lang="en">{el("head", head)}{el("body", el("main", header + nav + body))}</html>\n'
