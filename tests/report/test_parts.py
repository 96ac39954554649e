"""Small pieces: attribute escaping, the store URL shown in the report, tick values."""

from __future__ import annotations

from agentlens import redaction
from agentlens.report.html import Cell, table
from agentlens.report.svg import Bar, bar_chart, nice_ticks, short, tick_label
from agentlens.store import printable_url
from tests.report._html import parse


def test_a_cell_title_cannot_break_out_of_its_attribute() -> None:
    hostile = '" onmouseover="alert(1)" x=\''
    markup = table(["h"], [[Cell(hostile, title=hostile)]])
    tree = parse(markup)
    (td,) = [attrs for tag, attrs in tree.tags if tag == "td"]
    assert td == {"title": hostile}
    assert tree.tables[0][1] == [hostile]


def test_the_report_never_shows_the_store_password() -> None:
    assert printable_url("postgresql://bob:s3cret@db:5432/al") == "postgresql://bob:***@db:5432/al"
    assert printable_url("/tmp/store.db") == "/tmp/store.db"


def test_ticks_are_round_and_cover_the_maximum() -> None:
    assert nice_ticks(37, 4) == [0, 10, 20, 30, 40]
    assert nice_ticks(0.9, 4) == [0, 0.25, 0.5, 0.75, 1.0]
    assert nice_ticks(0) == [0.0, 1.0]


def test_tick_labels_never_use_exponents() -> None:
    # the 47-task cohort's token axis reached 10 000 and showed "1e+04"
    labels = [tick_label(t) for t in nice_ticks(12_345, 4)]
    assert labels == ["0", "5k", "10k", "15k"]
    assert tick_label(2_500_000) == "2.5M"
    assert tick_label(0.30000000000000004) == "0.3"
    assert tick_label(-20_000) == "-20k"
    chart = bar_chart([Bar("a", 12_345, "a"), Bar("b", 40, "b")])
    assert "e+" not in chart and ">10k<" in chart


def test_a_short_label_keeps_a_redaction_mark_whole() -> None:
    """The 28-character cut of an SVG label fell inside `[REDACTED:openai-key]` (the label
    showed `[REDACTED:open…`); the mark is kept whole, then the ellipsis."""
    key = "sk-proj-" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9"
    name = redaction.redact_text(f"agent run {key} v2")
    assert name == "agent run [REDACTED:openai-key] v2"  # the cut at 27 falls in the mark
    chart = bar_chart([Bar(name, 3, "a")])
    assert ">agent run [REDACTED:openai-key]…<" in chart, chart
    assert short(name[:-3]) == name[:-3]  # nothing cut after the mark: no ellipsis
    assert short("x" * 40) == "x" * 27 + "…"  # the plain cut is as before
