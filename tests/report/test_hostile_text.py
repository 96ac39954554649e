"""Text from traces is hostile: it must reach the report only escaped, and the document must hold
no script, no event handler and nothing loaded from elsewhere."""

from __future__ import annotations

import html
import re

import pytest

from agentlens.report import render_report
from agentlens.report.html import CSP
from agentlens.store import open_store
from tests.report._html import parse
from tests.report.conftest import HOSTILE_ID, HOSTILE_TASK, Store

ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "main", "header", "nav", "section", "h1",
    "h2", "h3", "p", "ol", "li", "a", "div", "span", "dl", "dt", "dd", "table", "caption",
    "thead", "tbody", "tr", "th", "td", "details", "summary", "figure", "figcaption",
    "svg", "rect", "line", "text",
}  # fmt: skip


@pytest.fixture(scope="module")
def everything(store: Store) -> str:
    """One report of every run in the store, the hostile ones included."""
    with open_store(store.url) as db:
        return render_report(db, list(store.runs.values()))


def test_hostile_text_appears_only_escaped(everything: str) -> None:
    assert html.escape(HOSTILE_ID, quote=True) in everything
    assert html.escape(HOSTILE_TASK, quote=True) in everything
    assert HOSTILE_ID not in everything
    assert HOSTILE_TASK not in everything
    assert "<img" not in everything
    assert "<script" not in everything.lower()


def test_hostile_text_is_escaped_in_tooltips_and_svg(everything: str) -> None:
    tree = parse(everything)
    titles = [a["title"] for _, a in tree.tags if a.get("title")]
    assert any(HOSTILE_ID in t for t in titles)  # the judge's unscored reason, unescaped back
    svg_titles = re.findall(r"<title>(.*?)</title>", everything)
    assert any(html.escape(HOSTILE_ID) in t for t in svg_titles)  # a model name in a box plot


def test_only_known_tags_and_no_handlers_or_links_out(everything: str) -> None:
    tree = parse(everything)
    assert {tag for tag, _ in tree.tags} <= ALLOWED_TAGS
    for tag, attrs in tree.tags:
        assert not [a for a in attrs if a.startswith("on")], tag
        assert tag != "a" or (attrs.get("href") or "").startswith("#")
        assert "src" not in attrs
    csp = [a for t, a in tree.tags if t == "meta" and a.get("http-equiv")]
    assert csp == [{"http-equiv": "Content-Security-Policy", "content": CSP}]


def test_every_element_is_closed_and_nested(everything: str) -> None:
    tree = parse(everything)
    assert tree.problems == []
    assert tree.stack == []
    assert everything.startswith("<!DOCTYPE html>")
