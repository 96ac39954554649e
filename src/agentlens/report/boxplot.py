"""Horizontal box plots (min, quartiles, median, max) per group, on a linear or log axis."""

from __future__ import annotations

import math
from collections.abc import Sequence

from agentlens.report.html import esc
from agentlens.report.stats import quantiles
from agentlens.report.style import ACCENT, MUTED
from agentlens.report.svg import label, line, nice_ticks, short, svg, tick_label


def _log_ticks(low: float, high: float) -> list[float]:
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    return [10.0**e for e in range(first, max(last, first + 1) + 1)]


def box_plots(groups: Sequence[tuple[str, Sequence[float]]], *, log: bool, unit: str) -> str:
    """One box per (name, values); a tooltip gives n and the five numbers."""
    kept = [(n, sorted(v)) for n, v in groups if v]
    values = [x for _, v in kept for x in v]
    left, right, row, top, width = 190, 24, 28, 8, 560
    height = top + row * max(len(kept), 1) + 34
    if log:
        ticks = _log_ticks(max(min(values, default=1), 1), max(max(values, default=10), 10))
        lo, hi = math.log10(ticks[0]), math.log10(ticks[-1])

        def x_of(v: float) -> float:
            return left + (width - left - right) * (math.log10(max(v, ticks[0])) - lo) / (hi - lo)
    else:
        ticks = nice_ticks(max(values, default=1), 5)

        def x_of(v: float) -> float:
            return left + (width - left - right) * v / ticks[-1]

    parts = [line(x_of(t), top, x_of(t), height - 28) + label(x_of(t), height - 14, tick_label(t),
             anchor="middle") for t in ticks]  # fmt: skip
    for i, (name, vals) in enumerate(kept):
        y = top + i * row + row / 2
        q = quantiles(vals)
        tip = (
            f"{name}: n={len(vals)}, min {q[0]:,.0f}, q1 {q[1]:,.0f}, median {q[2]:,.0f}, "
            f"q3 {q[3]:,.0f}, max {q[4]:,.0f} {unit}"
        )
        parts.append(label(left - 8, y + 4, short(name), anchor="end", color="#374151", title=name))
        parts.append(line(x_of(q[0]), y, x_of(q[4]), y, MUTED))
        parts.append(
            f'<rect x="{x_of(q[1]):.1f}" y="{y - 8:.1f}" width="{x_of(q[3]) - x_of(q[1]):.1f}" '
            f'height="16" fill="{ACCENT}33" stroke="{ACCENT}" rx="2"><title>{esc(tip)}</title></rect>'
        )
        parts.append(line(x_of(q[2]), y - 8, x_of(q[2]), y + 8, ACCENT, 2))
    parts.append(label((left + width - right) / 2, height - 1, unit + (" (log scale)" if log else ""),
                       anchor="middle"))  # fmt: skip
    return svg(width, height, "".join(parts), f"{unit} by group")
