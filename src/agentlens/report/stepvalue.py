"""Sections for step-value runs (`agentlens stepvalue … --store`): per evaluation channel the mean
per-step entropy movement ΔH, Bayesian surprise S and gold-margin gain G, how far the channels
disagree (the protocol moving the value, with its CI or why there is none), each trajectory's
totals per channel, and per trajectory the belief in each candidate over the steps (a chart per
channel) beside each step's value and its channel effect."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentlens.list_text import counted
from agentlens.report.belief_chart import belief_chart
from agentlens.report.html import Cell, details, el, figure, fmt, stat_cards, table, text
from agentlens.report.stats import mean
from agentlens.store import Metric, Record

VALUES = ("delta_h", "surprise", "g_margin")
CHARTED = 12
"""Trajectories drawn step by step; the rest are in the totals table."""
BASELINE = "direct"
HEADS = {"delta_h": "mean ΔH", "surprise": "mean S", "g_margin": "mean G"}


def channels(records: Sequence[Record]) -> list[str]:
    names = (m.name.split(":", 1)[0] for r in records for m in r.metrics if m.step is not None)
    return list(dict.fromkeys(names))


def _values(records: Sequence[Record], channel: str, value: str) -> list[float]:
    name = f"{channel}:{value}"
    return [m.value for r in records for m in r.metrics if m.name == name and m.value is not None]


def stepvalue_sections(records: Sequence[Record], summary: Mapping[str, Any] | None = None) -> str:
    """`summary`: the run's summary (its channel effects)."""
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
        + _effect_table((summary or {}).get("channel_effects") or [])
        + details(
            f"All {counted(len(records), 'trajectory')}",
            _trajectory_table(records, names),
            open_=True,
        )
        + "".join(_trajectory_steps(r, names) for r in records[:CHARTED])
    )


def _effect_table(effects: Sequence[Mapping[str, Any]]) -> str:
    if not effects:
        return ""
    rows = [
        [e.get("channel"), e.get("slice", "full"), e.get("value"), e.get("n"),
         Cell(fmt(e.get("mean_gap"), 3), class_="num"), _ci(e),
         Cell(fmt(e.get("wilcoxon_p"), 3), class_="num")]
        for e in effects
    ]  # fmt: skip
    caption = ("Channel effect: G under the channel − G under direct, per step; 95% CI by a "
               "bootstrap over trajectories.")  # fmt: skip
    head = ["channel", "slice", "value", "steps", "mean gap", "95% CI", "Wilcoxon p"]
    return table(head, rows, caption=caption)


def _ci(effect: Mapping[str, Any]) -> Cell:
    ci = effect.get("mean_gap_ci95")
    if isinstance(ci, list) and len(ci) == 2:
        return Cell(f"[{fmt(ci[0], 3)}, {fmt(ci[1], 3)}]", class_="num")
    return Cell("n/a", title=effect.get("mean_gap_ci95_na") or "no CI", class_="num")


def _trajectory_steps(record: Record, names: list[str]) -> str:
    """The belief chart per channel and the step table of one trajectory."""
    beliefs = record.body.get("beliefs") or []
    gold = record.body.get("gold_id")
    charts = []
    for channel in names:
        rows = sorted((b for b in beliefs if b["channel"] == channel), key=lambda b: b["index"])
        if not rows:
            continue
        steps = [rows[0]["index"] - 1, *(b["index"] for b in rows)]
        states = [rows[0]["before"], *(b["after"] for b in rows)]
        series = {c: [s.get(c) for s in states] for c in rows[0]["before"]}
        title = f"Belief per candidate over the steps of {record.trajectory_id} ({channel})"
        chart = belief_chart(steps, series, gold, title)
        charts.append(figure(chart, f"{channel}: belief after each step (step {steps[0]}: before)"))
    inner = el("div", "".join(charts), class_="grid") + _step_table(record, names)
    return details(f"Steps of {record.trajectory_id} (gold {gold or '–'})", inner)


def _step_table(record: Record, names: list[str]) -> str:
    g = {(m.name, m.step): m for m in record.metrics if m.step is not None}
    steps = sorted({m.step for m in record.metrics if m.step is not None})
    others = [c for c in names if c != BASELINE]
    rows = []
    for step in steps:
        cells: list[object] = [step]
        for c in names:
            m = g.get((f"{c}:g_margin", step))
            cells.append(
                Cell(fmt(m.value if m else None, 3), title=m.reason if m else None, class_="num")
            )
        base = g.get((f"{BASELINE}:g_margin", step))
        for c in others:
            m = g.get((f"{c}:g_margin", step))
            gap = (
                m.value - base.value
                if m and base and m.value is not None and base.value is not None
                else None
            )
            cells.append(Cell(fmt(gap, 3), class_="num"))
        rows.append(cells)
    head = ["step", *(f"G {c}" for c in names)]
    head += [f"effect {c} − {BASELINE}" for c in others] if BASELINE in names else []
    if BASELINE not in names:
        rows = [r[: 1 + len(names)] for r in rows]
    return table(
        head,
        rows,
        caption="Value of each step (gold-margin gain G) per channel, and the channel effect beside it.",
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
