"""Plots as inline SVG, written by hand: a stacked histogram, horizontal bars, box plots.
Labels and tooltips (`<title>`) are escaped like any other text from the results."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agentlens.redaction import clip_head
from agentlens.report.html import esc
from agentlens.report.style import ACCENT, GRID, MUTED

LABEL_CHARS = 28


@dataclass(frozen=True)
class Series:
    name: str
    counts: Sequence[int]
    color: str


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    tooltip: str
    color: str = ACCENT
    note: str = ""
    """Printed after the bar's value (e.g. an unscored rate)."""
    shown: str | None = None
    """Printed instead of the value (e.g. "–" when there is none)."""


def nice_ticks(high: float, count: int = 5) -> list[float]:
    """Round tick values from 0 to at least `high`."""
    if high <= 0:
        return [0.0, 1.0]
    raw = high / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [i * step for i in range(math.ceil(high / step - 1e-9) + 1)]


def tick_label(value: float) -> str:
    """An axis number as people write it: 250, 2.5, 10k, 1.2M (never `1e+04`)."""
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            return f"{round(value / size, 3):g}{suffix}"
    return f"{round(value, 6):g}"


def svg(width: int, height: int, inner: str, label: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="{esc(label)}">{inner}</svg>'
    )


def rect(x: float, y: float, w: float, h: float, color: str, tooltip: str) -> str:
    return (
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0):.1f}" height="{max(h, 0):.1f}" '
        f'fill="{esc(color)}" rx="1.5"><title>{esc(tooltip)}</title></rect>'
    )


def label(x: float, y: float, content: str, *, anchor: str = "start", size: int = 11,
          color: str = MUTED, title: str | None = None) -> str:  # fmt: skip
    tip = f"<title>{esc(title)}</title>" if title else ""
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" '
        f'fill="{color}">{tip}{esc(content)}</text>'
    )


def line(x1: float, y1: float, x2: float, y2: float, color: str = GRID, width: float = 1,
         dash: str | None = None) -> str:  # fmt: skip
    dashes = f' stroke-dasharray="{dash}"' if dash else ""
    return (
        f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
        f'stroke="{color}" stroke-width="{width}"{dashes}/>'
    )


def legend(items: Sequence[tuple[str, str]], x: float, y: float) -> str:
    out = []
    for name, color in items:
        out.append(
            f'<rect x="{x:.1f}" y="{y - 9:.1f}" width="10" height="10" fill="{color}" rx="2"/>'
        )
        out.append(label(x + 14, y, name))
        x += 24 + 6.5 * len(name)
    return "".join(out)


def short(name: str) -> str:
    """The label cut to `LABEL_CHARS` with an ellipsis; a redaction mark the cut falls in is kept
    whole (the label runs longer), so it never reads as `[REDACTED:open…`."""
    if len(name) <= LABEL_CHARS:
        return name
    head = clip_head(name, LABEL_CHARS - 1)
    return name if head == name else head + "…"


def stacked_histogram(
    edges: Sequence[float], series: Sequence[Series], *, x_label: str,
    marks: Sequence[tuple[float, str]] = (),
) -> str:  # fmt: skip
    """Counts per bin (`edges` has one more value than each series' counts), stacked by series;
    each mark (value, name) a dashed vertical line across the plot, named above it."""
    width, height, left, right, top, bottom = 560, 250, 40, 12, 26, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    totals = [sum(s.counts[i] for s in series) for i in range(len(edges) - 1)]
    ticks = nice_ticks(max(totals, default=0) or 1, 4)

    def y_of(v: float) -> float:
        return top + plot_h - plot_h * v / ticks[-1]

    parts = [line(left, y_of(t), width - right, y_of(t)) + label(left - 6, y_of(t) + 4,
             tick_label(t), anchor="end") for t in ticks]  # fmt: skip
    bin_w = plot_w / (len(edges) - 1)
    for i in range(len(edges) - 1):
        base = 0
        for s in series:
            n = s.counts[i]
            if n:
                tip = f"{s.name}, {edges[i]:g}–{edges[i + 1]:g}: {n}"
                parts.append(rect(left + i * bin_w + 1, y_of(base + n), bin_w - 2,
                                  y_of(base) - y_of(base + n), s.color, tip))  # fmt: skip
            base += n
    for i, edge in enumerate(edges):
        if i % 2 == 0:
            parts.append(
                label(left + i * bin_w, top + plot_h + 14, tick_label(edge), anchor="middle")
            )
    parts.append(line(left, top + plot_h, width - right, top + plot_h, MUTED))
    span = edges[-1] - edges[0]
    for i, (value, name) in enumerate(sorted(marks)):
        x, y = left + plot_w * (value - edges[0]) / span, top - 4 - 11 * (i % 2)  # staggered
        parts.append(line(x, y + 2, x, top + plot_h, MUTED, 1.2, dash="4 3"))
        parts.append(label(x, y, name, anchor="middle", size=10, title=f"{name}: {value:g}"))
    parts.append(label(left + plot_w / 2, height - 6, x_label, anchor="middle"))
    parts.append(legend([(s.name, s.color) for s in series], left, 14))
    return svg(width, height, "".join(parts), f"histogram of {x_label}")


def bar_chart(bars: Sequence[Bar], *, x_max: float | None = None,
              value_format: Callable[[float], str] = tick_label) -> str:  # fmt: skip
    """One horizontal bar per item, its value printed at its end."""
    left, right, row, top = 190, 120, 24, 8
    width = 560
    plot_w = width - left - right
    ticks = nice_ticks(x_max or max((b.value for b in bars), default=0) or 1, 4)
    height = top + row * len(bars) + 24
    parts = []
    for t in ticks:
        x = left + plot_w * t / ticks[-1]
        parts.append(
            line(x, top, x, height - 20) + label(x, height - 6, tick_label(t), anchor="middle")
        )
    for i, bar in enumerate(bars):
        y = top + i * row
        w = plot_w * bar.value / ticks[-1]
        parts.append(label(left - 8, y + 16, short(bar.label), anchor="end", color="#374151",
                           title=bar.label))  # fmt: skip
        parts.append(rect(left, y + 5, w, row - 9, bar.color, bar.tooltip))
        shown = value_format(bar.value) if bar.shown is None else bar.shown
        value = shown + (f" · {bar.note}" if bar.note else "")
        parts.append(label(left + w + 6, y + 16, value, color="#374151"))
    return svg(width, height, "".join(parts), "bar chart")
