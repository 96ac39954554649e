"""Sections for step-value runs (`agentlens stepvalue … --store`): per evaluation channel the mean
per-step entropy movement ΔH, Bayesian surprise S and gold-margin gain G, how far the channels
disagree (the protocol moving the value), and each trajectory's totals per channel."""

from __future__ import annotations

from collections.abc import Sequence

from agentlens.report.html import Cell, details, el, fmt, stat_cards, table, text
from agentlens.report.stats import mean
from agentlens.store import Metric, Record

VALUES = ("delta_h", "surprise", "g_margin")
HEADS = {"delta_h": "mean ΔH", "surprise": "mean S", "g_margin": "mean G"}


def channels(records: Sequence[Record]) -> list[str]:
    names = (m.name.split(":", 1)[0] for r in records for m in r.metrics if m.step is not None)
    return list(dict.fromkeys(names))


def _values(records: Sequence[Record], channel: str, value: str) -> list[float]:
    name = f"{channel}:{value}"
    return [m.value for r in records for m in r.metrics if m.name == name and m.value is not None]


def stepvalue_sections(records: Sequence[Record]) -> str:
    if not records:
        return text("p", "This run holds no records.", class_="note")
    names = channels(records)
    steps = {m.step for r in records for m in r.metrics if m.step is not None}
    g_means = [g for c in names if (g := mean(_values(records, c, "g_margin"))) is not None]
    spread = max(g_means) - min(g_means) if len(g_means) > 1 else None
    cards = [("trajectories", fmt(len(records))), ("channels", fmt(len(names))),
             ("steps valued", fmt(len(steps))), ("spread of mean G", fmt(spread, 3))]  # fmt: skip
    return (
        stat_cards(cards)
        + el("div", _channel_table(records, names), class_="grid")
        + details(f"All {len(records)} trajectories", _trajectory_table(records, names), open_=True)
    )


def _channel_table(records: Sequence[Record], names: list[str]) -> str:
    rows = [
        [c, len(_values(records, c, "delta_h")),
         *(Cell(fmt(mean(_values(records, c, v)), 3), class_="num") for v in VALUES)]
        for c in names
    ]  # fmt: skip
    caption = ("Per step, averaged over every valued step. The spread of mean G across channels "
               "is how much the evaluation protocol itself moves the value.")  # fmt: skip
    return table(["channel", "steps", *(HEADS[v] for v in VALUES)], rows, caption=caption)


def _trajectory_table(records: Sequence[Record], names: list[str]) -> str:
    body = [
        [r.trajectory_id, r.task_id, r.outcome, *(_sum_g(r, c) for c in names)] for r in records
    ]
    head = ["trajectory", "task", "outcome", *(f"Σ G {c}" for c in names)]
    return table(head, body, caption="Hover a total for its first step's reason.", class_="runs")


def _sum_g(record: Record, channel: str) -> Cell:
    found: list[Metric] = [m for m in record.metrics if m.name == f"{channel}:g_margin"]
    values = [m.value for m in found if m.value is not None]
    first = next((m.reason for m in record.metrics if m.name == f"{channel}:delta_h"), None)
    return Cell(fmt(sum(values), 3) if values else None, title=first, class_="num")
