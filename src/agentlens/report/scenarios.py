"""Sections for scenario runs (`agentlens run --store`): the formal pass rate over the runs that
did not fail (failed runs leave the denominator, spec §4.4), per persona, why dialogs stopped, and
each scenario × persona run."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from agentlens.report.html import Cell, details, el, fmt, percent, stat_cards, table, text
from agentlens.report.stats import group_by
from agentlens.store import Record


def persona(record: Record) -> str:
    """Scenario runs are named `<run>/<scenario>/<persona>`."""
    return record.trajectory_id.rsplit("/", 1)[-1]


def _passed(record: Record) -> float | None:
    metric = record.metric("formal_passed")
    return None if metric is None else metric.value


def scenario_sections(records: Sequence[Record]) -> str:
    if not records:
        return text("p", "This run holds no records.", class_="note")
    counted = [r for r in records if _passed(r) is not None]
    passed = sum(1 for r in counted if _passed(r) == 1.0)
    cards = [("runs", fmt(len(records))), ("failed runs", fmt(len(records) - len(counted))),
             ("formal pass rate", percent(passed, len(counted)))]  # fmt: skip
    return (
        stat_cards(cards)
        + el("div", _persona_table(records) + _termination_table(records), class_="grid")
        + details(f"All {len(records)} scenario runs", _run_table(records), open_=True)
    )


def _persona_table(records: Sequence[Record]) -> str:
    rows = []
    for name, group in sorted(group_by(records, persona).items()):
        counted = [r for r in group if _passed(r) is not None]
        passed = sum(1 for r in counted if _passed(r) == 1.0)
        rows.append([name, len(group), len(group) - len(counted), passed,
                     percent(passed, len(counted))])  # fmt: skip
    return table(["persona", "runs", "failed", "passed", "pass rate"], rows,
                 caption="Failed runs (agent, simulator or setup errors) leave the pass rate.")  # fmt: skip


def _termination_table(records: Sequence[Record]) -> str:
    counts = Counter((m.label or "–") for r in records if (m := r.metric("termination")))
    rows = [[name, count, percent(count, len(records))] for name, count in counts.most_common()]
    return table(["stopped by", "runs", "share"], rows, caption="Why each dialog ended.")


def _run_table(records: Sequence[Record]) -> str:
    body = []
    for r in records:
        verdict = r.metric("formal_passed")
        shown = "failed run" if _passed(r) is None else ("PASS" if _passed(r) == 1.0 else "FAIL")
        body.append([
            r.trajectory_id, Cell(shown, title=verdict.reason if verdict else None),
            _value(r, "verifiers_passed", 2), _value(r, "user_messages", 0),
            _value(r, "steps", 0), (m.label if (m := r.metric("termination")) else None),
        ])  # fmt: skip
    caption = "Hover a verdict for the stop rule's wording."
    head = ["run", "formal", "verifiers passed", "user messages", "steps", "stopped by"]
    return table(head, body, caption=caption, class_="runs")


def _value(record: Record, name: str, digits: int) -> Cell:
    metric = record.metric(name)
    value = None if metric is None else metric.value
    return Cell(fmt(value, digits) if digits else fmt(None if value is None else int(value)),
                class_="num")  # fmt: skip
