"""Sections for import runs: how many trajectories per model, and their steps and tokens."""

from __future__ import annotations

from collections.abc import Sequence

from agentlens.report.boxplot import box_plots
from agentlens.report.html import Cell, el, figure, fmt, percent, stat_cards, table, text
from agentlens.report.stats import group_by, median
from agentlens.store import Record


def _value(record: Record, name: str) -> float | None:
    metric = record.metric(name)
    return metric.value if metric else None


def _values(records: Sequence[Record], name: str) -> list[float]:
    return [v for r in records if (v := _value(r, name)) is not None]


def import_sections(records: Sequence[Record]) -> str:
    if not records:
        return text("p", "This run holds no records.", class_="note")
    by_model = sorted(group_by(records, lambda r: r.model or "unknown").items())
    cards = [
        ("trajectories", fmt(len(records))),
        ("models", fmt(len(by_model))),
        ("tasks", fmt(len({r.task_id for r in records}))),
        ("pass rate", _pass_rate(records)),
        ("labelled", percent(len(_labelled(records)), len(records))),
        ("steps", fmt(int(sum(_values(records, "steps"))))),
        ("tokens", _total(_values(records, "tokens"))),
    ]
    steps = box_plots([(m, _values(g, "steps")) for m, g in by_model], log=False, unit="steps")
    if _values(records, "tokens"):
        tokens = box_plots(
            [(m, _values(g, "tokens")) for m, g in by_model], log=True, unit="tokens"
        )
        token_figure = figure(
            tokens, "Tokens per trajectory, by model (models whose traces report none left out)."
        )
    else:
        token_figure = text("p", "No trajectory of this run reports token counts.", class_="note")
    plots = el(
        "div",
        figure(steps, "Steps per trajectory, by model (box: quartiles, bar: median).")
        + token_figure,
        class_="grid",
    )
    return stat_cards(cards) + plots + _model_table(by_model)


def _model_table(by_model: Sequence[tuple[str, list[Record]]]) -> str:
    head = ["model", "trajectories", "pass rate", "median steps", "median tool calls",
            "median tokens", "total tokens", "total cost ($)"]  # fmt: skip
    body = []
    for model, group in by_model:
        costs, tokens = _values(group, "cost"), _values(group, "tokens")
        body.append([
            model, len(group), _pass_rate(group),
            _whole(median(_values(group, "steps"))), _whole(median(_values(group, "tool_calls"))),
            _whole(median(tokens)), Cell(_total(tokens), class_="num"),
            Cell(_dollars(sum(costs)), class_="num") if costs else None,
        ])  # fmt: skip
    caption = "Pass rate over the trajectories with a pass/fail label; – when none has one."
    return table(head, body, caption=caption)


def _labelled(records: Sequence[Record]) -> list[Record]:
    return [r for r in records if r.outcome in ("passed", "failed")]


def _pass_rate(records: Sequence[Record]) -> str:
    """Unlabelled trajectories are not failures: they leave the denominator."""
    labelled = _labelled(records)
    return percent(sum(r.outcome == "passed" for r in labelled), len(labelled))


def _total(values: list[float]) -> str:
    """A sum of counts, or – when no trajectory reported any (not 0: unknown)."""
    return fmt(int(sum(values))) if values else "–"


def _dollars(value: float) -> str:
    """Cents, or 2 significant digits below a cent (a $0.003 run is not $0.0)."""
    return f"{value:,.2f}" if value >= 0.01 or value == 0 else f"{value:.2g}"


def _whole(value: float | None) -> float | int | None:
    """Counts print without decimals; a median between two counts keeps its .5."""
    return int(value) if value is not None and value.is_integer() else value
