"""The HTML report of a real step-value run (local model, fault-localisation candidates on a real
trace): a belief chart per channel with a line per candidate, each step's value and its channel
effect, the one-trajectory CI shown as n/a with its reason, and hostile text escaped."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentlens.report import render_report
from agentlens.store import open_store
from tests.cli.conftest import run_cli  # noqa: F401  (the fixture)
from tests.conftest import BENCH

TASK = BENCH / "trajectories" / "psf__requests-1724"
RUN = TASK / "psf__requests-1724-logs-gemini-2.5-pro-pass-24943628310_pta.json"
HOSTILE = '<img src=x onerror="alert(1)">'


@pytest.mark.llm
def test_report_shows_a_real_step_value_run(
    run_cli: Callable[..., Any],  # noqa: F811
    local_gguf_path: Path,
    tmp_path: Path,
) -> None:
    trace = tmp_path / f"{HOSTILE}-pass.json"  # the trajectory id comes from the file name
    shutil.copy(RUN, trace)
    db, out = str(tmp_path / "sv.db"), tmp_path / "sv"
    result = run_cli(
        "stepvalue", str(trace), "--runs", str(TASK), "--candidates", "fault-localisation",
        "--evaluator", f"llamacpp:{local_gguf_path}", "--channels", "direct,extractive-buffer",
        "-b", "1", "--max-steps", "3", "--out", str(out), "--store", db,
    )  # fmt: skip
    assert result.code == 0, result.out + result.err
    summary = json.loads((out / "summary.json").read_text())
    (problem,) = summary["trajectories"]
    with open_store(db) as store:
        (run,) = store.runs(kind="stepvalue")
        page = render_report(store, [run.id])
    assert "<script" not in page.lower() and HOSTILE not in page
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page
    charts = re.findall(
        r'<svg [^>]*aria-label="Belief per candidate[^"]*\((direct|extractive-buffer)\)"', page
    )
    assert charts == ["direct", "extractive-buffer"]
    lines = re.findall(r'<polyline points="([^"]*)"', page)
    assert len(lines) == 2 * len(problem["candidate_ids"])
    assert all(len(p.split()) == 4 for p in lines)  # before step 1, then after each of 3 steps
    assert f"{problem['gold_id']} (gold)" in page
    rows = [json.loads(x) for x in (out / "steps.jsonl").read_text().splitlines()]
    by = {(r["channel"], r["index"]): r["g_margin"] for r in rows if r["slice"] == "full"}
    for (channel, index), g in by.items():
        if channel == "extractive-buffer":
            gap = g - by[("direct", index)]
            assert f'<td class="num">{gap:,.3f}</td>' in page
    effects = summary["channel_effects"]
    assert effects and all(e["mean_gap_ci95"] is None for e in effects)  # one trajectory
    for effect in effects:
        reason = effect["mean_gap_ci95_na"]
        assert reason.startswith("n/a: 1 trajectory")
        assert f'<td title="{reason}" class="num">n/a</td>' in page
    _viewer_shows_the_step_values(Path(db), run.id, problem, by)


def _viewer_shows_the_step_values(
    db: Path, run_id: str, problem: dict[str, Any], g: dict[tuple[str, int], float]
) -> None:
    """The same run in `agentlens view`, in headless Chromium: a chart per channel with a line
    per candidate, and each step's channel effect."""
    from tests.conftest import missing
    from tests.viewer.conftest import ARGS, CHROMIUM, _missing
    from tests.viewer.server import running

    if _missing():
        missing(str(_missing()))
    from playwright.sync_api import sync_playwright

    with open_store(str(db)) as store:
        (record,) = store.records(run_id)
    route = f"#/trajectories/{record.trajectory}?run={run_id}&record=0"
    with running(db) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(server.url + route)
        page.wait_for_selector("section.step-value svg[data-channel]")
        channels = page.locator("svg[data-channel]").evaluate_all(
            "els => els.map(e => e.dataset.channel)"
        )
        assert channels == ["direct", "extractive-buffer"]
        lines = page.locator("svg[data-channel='direct'] polyline")
        assert lines.count() == len(problem["candidate_ids"])
        effects = page.locator("table.step-values tbody td:nth-child(4)").all_inner_texts()
        steps = sorted({i for _, i in g})
        assert effects == [f"{g[('extractive-buffer', i)] - g[('direct', i)]:.3f}" for i in steps]
        assert page.evaluate("window.__pwned") is None and errors == []
        browser.close()
