"""A small inline-SVG line chart of an evaluator's belief per candidate over a trajectory's
steps (step value). No script: the report stays script-free under its CSP."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from agentlens.report.html import esc
from agentlens.report.svg import label, legend, line, short, svg

PALETTE = ("#3b6fb6", "#c8473d", "#2f8f5b", "#b7791f", "#7c4dbd", "#0f8a8a", "#a0527a", "#6b7280")
WIDTH, HEIGHT, LEFT, TOP, PLOT_H = 560, 210, 40, 14, 140


def belief_chart(
    steps: Sequence[int],
    beliefs: Mapping[str, Sequence[float | None]],
    gold: str | None,
    title: str,
) -> str:
    """One line per candidate: its belief after each step (0 to 1), the gold's line thicker."""
    names = list(beliefs)
    if not steps or not names:
        return ""
    width = WIDTH - LEFT - 12
    x_of = {s: LEFT + (width * i / max(len(steps) - 1, 1)) for i, s in enumerate(steps)}

    def y_of(p: float) -> float:
        return TOP + PLOT_H * (1 - p)

    parts = []
    for tick in (0.0, 0.5, 1.0):
        parts.append(line(LEFT, y_of(tick), LEFT + width, y_of(tick)))
        parts.append(label(LEFT - 6, y_of(tick) + 4, f"{tick:g}", anchor="end"))
    for s in (steps[0], steps[-1]) if len(steps) > 1 else (steps[0],):
        parts.append(label(x_of[s], TOP + PLOT_H + 14, f"step {s}", anchor="middle"))
    colors = {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(names)}
    for name in names:
        parts.append(_polyline(steps, beliefs[name], x_of, y_of, colors[name], name, name == gold))
    keys = [(short(f"{n} (gold)" if n == gold else n), colors[n]) for n in names]
    parts.append(legend(keys[:3], LEFT, TOP + PLOT_H + 34))
    if len(keys) > 3:
        parts.append(legend(keys[3:6], LEFT, TOP + PLOT_H + 50))
    return svg(WIDTH, HEIGHT + (16 if len(keys) > 3 else 0), "".join(parts), title)


def _polyline(
    steps: Sequence[int],
    values: Sequence[float | None],
    x_of: Mapping[int, float],
    y_of: Callable[[float], float],
    color: str,
    name: str,
    gold: bool,
) -> str:
    points = [
        f"{x_of[s]:.1f},{y_of(v):.1f}" for s, v in zip(steps, values, strict=True) if v is not None
    ]
    tip = "; ".join(
        f"step {s}: {v:.3f}" for s, v in zip(steps, values, strict=True) if v is not None
    )
    return (
        f'<polyline points="{" ".join(points)}" fill="none" stroke="{color}" '
        f'stroke-width="{3 if gold else 1.5}"><title>{esc(name)}: {esc(tip)}</title></polyline>'
    )
