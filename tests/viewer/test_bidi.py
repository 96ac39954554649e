"""Bidirectional overrides and isolates in trace text (Trojan Source: `rm -rf /‮ txt.`
shows in another order than it runs) are shown as U+FFFD by the viewer, in real Chromium, and
by the HTML report; the rest of the text is shown as it is. Also: no planted markup runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

import agentlens
from agentlens.formats.jsonl import dump_jsonl
from tests.viewer.conftest import SCORED
from tests.viewer.server import Server, running

OVERRIDES = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
COMMAND = f"cat notes{OVERRIDES}.txt <img src=x onerror=window.__pwned=1>"
RUN_ID = f"bidi-run{OVERRIDES}"
MODEL = f"gpt{OVERRIDES}"


def bidi_store(folder: Path) -> Path:
    (real,) = agentlens.read_path(SCORED[0])
    steps = list(real.steps)
    tool = next(i for i, s in enumerate(steps) if s.kind == "tool")
    steps[tool] = msgspec.structs.replace(steps[tool], command=COMMAND, observation=COMMAND)
    trace = folder / "bidi.jsonl"
    planted = msgspec.structs.replace(real, id=RUN_ID, task=COMMAND, model=MODEL, steps=steps)
    dump_jsonl([planted], trace)
    store = folder / "bidi.db"
    assert agentlens_cli("store", "import", "--store", str(store), str(trace)) == 0
    return store


def agentlens_cli(*args: str) -> int:
    from agentlens.cli import main

    return main(list(args))


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bidi_store(tmp_path_factory.mktemp("bidi"))


@pytest.fixture(scope="module")
def server(store_path: Path) -> Iterator[Server]:
    with running(store_path) as started:
        yield started


def test_the_viewer_shows_overrides_as_replacement_characters(page: Any, server: Server) -> None:
    page.goto(server.url + "#/trajectories")
    page.click("table.data tbody tr a")
    page.wait_for_selector("li.step pre.command")
    shown = page.inner_text("main")
    assert [c for c in OVERRIDES if c in shown] == []
    assert "cat notes\ufffd" in shown and "bidi-run\ufffd" in shown
    assert page.evaluate("window.__pwned") is None


def test_the_report_shows_overrides_as_replacement_characters(
    store_path: Path, tmp_path: Path
) -> None:
    out = tmp_path / "report.html"
    assert (
        agentlens_cli("report", "--store", str(store_path), "--kind", "import", "-o", str(out)) == 0
    )
    html = out.read_text()
    assert [c for c in OVERRIDES if c in html] == []
    assert "gpt" + "\ufffd" * len(OVERRIDES) in html  # the import report names models
