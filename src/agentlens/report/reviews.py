"""Sections for judge-review runs: per dimension the mean of scored reviews beside the unscored
rate (an unscored review is never a 0), and each trajectory's scores with the judge's reasons."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentlens.report.html import Cell, details, el, figure, fmt, percent, stat_cards, table, text
from agentlens.report.stats import mean
from agentlens.report.style import ACCENT
from agentlens.report.svg import Bar, bar_chart
from agentlens.reviews import ALL_DIMENSIONS
from agentlens.store import Metric, Record

PREFIX = "review:"


@dataclass(frozen=True)
class DimensionLine:
    dimension: str
    mean: float | None
    scored: int
    unscored: int

    @property
    def unscored_rate(self) -> float | None:
        total = self.scored + self.unscored
        return self.unscored / total if total else None


def dimensions(records: Sequence[Record]) -> list[str]:
    """Reviewed dimensions, the canonical ones (the five, then the testing set's) first."""
    found = dict.fromkeys(
        m.name.removeprefix(PREFIX) for r in records for m in r.metrics if m.name.startswith(PREFIX)
    )
    known = [d for d in ALL_DIMENSIONS if d in found]
    return known + [d for d in found if d not in ALL_DIMENSIONS]


def dimension_lines(records: Sequence[Record]) -> list[DimensionLine]:
    lines = []
    for dim in dimensions(records):
        found = [m for r in records if (m := r.metric(PREFIX + dim))]
        scores = [m.value for m in found if m.value is not None]
        lines.append(DimensionLine(dim, mean(scores), len(scores), len(found) - len(scores)))
    return lines


def review_sections(records: Sequence[Record]) -> str:
    if not records:
        return text("p", "This run holds no records.", class_="note")
    lines = dimension_lines(records)
    calls = sum(line.scored + line.unscored for line in lines)
    unscored = sum(line.unscored for line in lines)
    cards = [("trajectories", fmt(len(records))), ("dimensions", fmt(len(lines))),
             ("judge answers", fmt(calls)), ("unscored", percent(unscored, calls))]  # fmt: skip
    return (
        stat_cards(cards)
        + el("div", _dimension_chart(lines) + _dimension_table(lines), class_="grid")
        + details(f"All {len(records)} reviewed trajectories", _trajectory_table(records),
                  open_=True)
    )  # fmt: skip


def _dimension_chart(lines: Sequence[DimensionLine]) -> str:
    bars = [
        Bar(line.dimension, line.mean or 0.0,
            f"{line.dimension}: mean {fmt(line.mean, 2)} over {line.scored} scored, "
            f"{line.unscored} unscored", ACCENT,
            note=f"unscored {_rate(line.unscored_rate)}",
            shown=None if line.mean is not None else "–")
        for line in lines
    ]  # fmt: skip
    plot = bar_chart(bars, x_max=1.0, value_format=lambda v: f"{v:.2f}")
    return figure(plot, "Mean score (0 / 0.5 / 1) of the scored reviews; unscored rate beside it.")


def _rate(rate: float | None) -> str:
    return "–" if rate is None else f"{100 * rate:.0f}%"


def _dimension_table(lines: Sequence[DimensionLine]) -> str:
    body = [[line.dimension, Cell(fmt(line.mean, 2), class_="num"), line.scored, line.unscored,
             _rate(line.unscored_rate)] for line in lines]  # fmt: skip
    return table(["dimension", "mean", "scored", "unscored", "unscored rate"], body,
                 caption="Means leave unscored reviews out.")  # fmt: skip


def _trajectory_table(records: Sequence[Record]) -> str:
    dims = dimensions(records)
    body = [
        [r.trajectory_id, r.task_id, r.model, r.outcome,
         *(_score_cell(r.metric(PREFIX + d)) for d in dims)]
        for r in records
    ]  # fmt: skip
    caption = "Hover a score for the judge's review or the reason it is unscored."
    return table(
        ["trajectory", "task", "model", "outcome", *dims], body, caption=caption, class_="runs"
    )


def _score_cell(metric: Metric | None) -> Cell:
    if metric is None:
        return Cell(None)
    if metric.value is None:
        return Cell("unscored", title=metric.reason, class_="tier-none")
    return Cell(f"{metric.value:g}", title=metric.reason, class_="num")
