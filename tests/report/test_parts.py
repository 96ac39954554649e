"""Small pieces: attribute escaping, the store URL shown in the report, tick values."""

from __future__ import annotations

from agentlens.report.html import Cell, table
from agentlens.report.svg import Bar, bar_chart, nice_ticks, tick_label
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
