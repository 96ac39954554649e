"""The viewer in a real headless Chromium, driven by Playwright, against `agentlens view`.

Skipped with the reason when Playwright or /usr/bin/chromium is missing, except under CI (`$CI`
set), where they must run. Screenshots go to `$AGENTLENS_SCREENSHOTS` when set (else tmp_path).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentlens.process.labeler import label_trajectory
from agentlens.store import Run, SqlStore, open_store
from tests.viewer.conftest import HOSTILE, IMG, Built
from tests.viewer.server import Server, running


@pytest.fixture(scope="module")
def server(built: Built) -> Iterator[Server]:
    with running(built.path) as started:
        yield started


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("AGENTLENS_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def visit(page: Any, server: Server, route: str, ready: str) -> None:
    page.goto(server.url + route)
    page.wait_for_selector(ready)


def texts(page: Any, selector: str) -> list[str]:
    return [t.strip() for t in page.locator(selector).all_inner_texts()]


def settled(page: Any, selector: str, expected: list[str], timeout_s: float = 10) -> list[str]:
    """The texts once the page shows `expected` (the server answers a sort or filter a moment
    later), else the last texts seen, for the assertion to show."""
    for _ in range(int(timeout_s / 0.05)):
        found = texts(page, selector)
        if found == expected:
            return found
        page.wait_for_timeout(50)
    return texts(page, selector)


def test_runs_page_lists_every_run(page: Any, server: Server, store: SqlStore) -> None:
    visit(page, server, "#/runs", "table.data tbody tr")
    assert sorted(texts(page, "tbody td:nth-child(1)")) == sorted(r.id[:12] for r in store.runs())
    assert HOSTILE in texts(page, "tbody td:nth-child(4)")


def test_run_page_shows_its_records_and_sorts_by_score(
    page: Any, server: Server, store: SqlStore, built: Built, shots: Path
) -> None:
    visit(page, server, "#/runs", "table.data tbody tr")
    page.click(f"a[href='#/runs/{built.score_run}']")
    page.wait_for_selector("text=records shown")
    records = store.records(built.score_run)
    assert texts(page, "tbody td:nth-child(2) a") == [r.trajectory_id for r in records]
    names = [m.name for m in records[0].metrics]
    column = f"table.data tbody tr td:nth-child({names.index('score') + 5})"
    page.click("button[data-sort='m:score']")
    scores = sorted((r.metric("score").value for r in records), reverse=True)  # type: ignore[union-attr]
    want = [f"{s:.1f}" for s in scores]
    assert settled(page, column, want) == want
    page.click("button[data-sort='m:score']")
    assert settled(page, column, want[::-1]) == want[::-1]
    page.screenshot(path=str(shots / "run-1280.png"))


def test_a_donor_is_badged_in_sample_on_its_run_and_trajectory_pages(
    page: Any, server: Server, store: SqlStore, built: Built
) -> None:
    """A donor scored against a graph built from itself looked like any other run (the
    conftest's run scores one donor of its reference)."""
    records = store.records(built.score_run)
    (donor,) = [r for r in records if r.body["in_sample"]]
    visit(page, server, f"#/runs/{built.score_run}", "table.data tbody tr")
    badged = page.locator("tbody tr:has(.badge.in-sample) td:nth-child(2) a")
    assert badged.all_inner_texts() == [donor.trajectory_id]
    assert page.locator("[data-in-sample]").is_visible()
    assert "graph built from itself" in page.inner_text("[data-in-sample]")
    visit(page, server, f"#/trajectories/{donor.trajectory}?run={built.score_run}", ".score-panel")
    assert page.locator(".score-panel .badge.in-sample").is_visible()
    assert "graph built from itself" in page.inner_text(".score-panel .in-sample-note")
    other = next(r for r in records if not r.body["in_sample"])
    visit(page, server, f"#/trajectories/{other.trajectory}?run={built.score_run}", ".score-panel")
    badge = page.locator(".score-panel .in-sample")
    # only the hash changed: the donor's panel is still there until the new one replaces it
    badge.wait_for(state="detached", timeout=10_000)
    assert badge.count() == 0


def test_a_run_without_donors_shows_no_in_sample_note(
    page: Any, server: Server, built: Built
) -> None:
    visit(page, server, f"#/runs/{built.import_run}", "table.data tbody tr")
    assert page.locator("[data-in-sample]").is_hidden()


def test_filters_narrow_the_records(
    page: Any, server: Server, store: SqlStore, built: Built
) -> None:
    visit(page, server, f"#/runs/{built.score_run}", "table.data tbody tr")
    records = store.records(built.score_run)
    page.keyboard.press("/")
    page.keyboard.type("gpt-4o")
    expected = [r.trajectory_id for r in records if "gpt-4o" in r.trajectory_id]
    assert settled(page, "tbody td:nth-child(2)", expected) == expected
    page.fill("[data-filter]", "")
    page.select_option("select[aria-label='Outcome']", "failed")
    expected = [r.trajectory_id for r in records if r.outcome == "failed"]
    assert settled(page, "tbody td:nth-child(2)", expected) == expected


def test_a_record_opens_its_trajectory_with_a_phase_timeline(
    page: Any, server: Server, store: SqlStore, built: Built, shots: Path
) -> None:
    visit(page, server, f"#/runs/{built.score_run}?sort=m:score&dir=desc", "table.data tbody tr")
    best = max(store.records(built.score_run), key=lambda r: r.metric("score").value or 0)  # type: ignore[union-attr]
    page.click("table.data tbody tr:first-child td:nth-child(3)")  # a row click, off the link
    page.wait_for_selector("li.step")
    trajectory = store.trajectory(best.trajectory)
    stages = [s for s in label_trajectory(trajectory) if s]
    assert page.inner_text("h1.traj-id") == trajectory.id
    assert page.locator("li.step").count() == len(trajectory.steps)
    segments = page.locator(".strip .seg")
    assert [c.split()[-1] for c in segments.evaluate_all("els => els.map(e => e.className)")] == [
        f"stage-{s}" for s in stages
    ]
    assert page.inner_text(".score-value") == f"{best.metric('score').value:.1f}"  # type: ignore[union-attr]
    assert texts(page, ".score-panel .badge") == [best.metric("tier").label]  # type: ignore[union-attr]
    assert page.locator(".signals dt").count() == len(best.metrics) - 2
    page.screenshot(path=str(shots / "trajectory-1280.png"))
    page.keyboard.press("j")
    page.keyboard.press("j")
    assert page.evaluate("document.activeElement.id") == "step-1"
    differ = [
        step.index
        for step, stage in zip(trajectory.steps, label_trajectory(trajectory), strict=True)
        if step.stored_stage and step.stored_stage[0].upper() != stage
    ]
    shown = page.locator("li.step:has(.stored-stage)").evaluate_all(
        "els => els.map(e => Number(e.dataset.index))"
    )
    assert differ and shown == differ  # the trace's own label, only where it disagrees


def test_a_link_naming_only_the_run_still_shows_the_score_panel(
    page: Any, server: Server, store: SqlStore, built: Built
) -> None:
    record = store.records(built.score_run)[1]
    visit(page, server, f"#/trajectories/{record.trajectory}?run={built.score_run}", ".score-panel")
    assert page.inner_text(".score-value") == f"{record.metric('score').value:.1f}"  # type: ignore[union-attr]
    assert page.inner_text(".crumbs").startswith(f"Runs › {built.score_run[:12]}")


def test_hostile_trajectory_is_shown_as_text(
    page: Any, server: Server, store: SqlStore, built: Built, shots: Path
) -> None:
    visit(page, server, f"#/trajectories/{built.hostile}", "li.step")
    trajectory = store.trajectory(built.hostile)
    assert page.inner_text("h1.traj-id") == trajectory.id
    assert any(HOSTILE in t for t in texts(page, "pre.observation"))
    assert any(HOSTILE in t for t in texts(page, "pre.command"))
    assert IMG in texts(page, ".tool")
    visit(page, server, "#/runs", "table.data tbody tr")
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img, main script").count() == 0
    visit(page, server, f"#/trajectories/{built.hostile}", "li.step")
    page.screenshot(path=str(shots / "hostile.png"))
    assert page.evaluate("window.__pwned") is None


def test_show_full_fetches_the_whole_observation(
    page: Any, server: Server, store: SqlStore, built: Built
) -> None:
    visit(page, server, f"#/trajectories/{built.long}", "li.step")
    longest = max(store.trajectory(built.long).steps, key=lambda s: len(s.observation or ""))
    field = page.locator(f"#step-{longest.index} .field-observation")
    assert len(field.locator("pre").inner_text()) == 4000
    field.locator("button.show-full").click()
    field.locator("button.show-full").wait_for(state="detached")
    assert field.locator("pre").inner_text() == longest.observation


def test_fits_an_800_pixel_window(page: Any, server: Server, built: Built, shots: Path) -> None:
    page.set_viewport_size({"width": 800, "height": 900})
    for route in (f"#/runs/{built.score_run}", f"#/trajectories/{built.hundred}"):
        visit(page, server, route, "main .page")
        assert page.evaluate("document.documentElement.scrollWidth") <= 800, route
    page.screenshot(path=str(shots / "trajectory-800.png"))


def test_a_bad_id_shows_the_server_message(page: Any, server: Server, problems: list[str]) -> None:
    page.goto(server.url + "#/runs/0000000000")
    page.wait_for_selector(".error")
    assert "no run '0000000000'" in page.inner_text(".error")
    assert all("404" in p for p in problems)  # Chromium logs the API's 404 answer
    problems.clear()


def test_a_run_saved_in_parts_and_not_finished_is_badged_incomplete(
    page: Any, store: SqlStore, built: Built, tmp_path: Path
) -> None:
    """A run whose command stopped before its last part (`cohort --store` interrupted) must not
    look whole: an `incomplete` badge on the runs list and on the run's page."""
    records = store.records(built.score_run)[:3]
    trajectories = [store.trajectory(r.trajectory) for r in records]
    path = tmp_path / "parts.db"
    with open_store(str(path)) as parts:
        parts.save_part(Run(kind="score", scorer="process/paper/1", id="run-in-parts"),
                        trajectories, records)  # fmt: skip
    with running(path) as server:
        visit(page, server, "#/runs", "table.data tbody tr")
        assert texts(page, "tbody td:nth-child(6)") == ["3 incomplete"]
        visit(page, server, "#/runs/run-in-parts", "dl.facts")
        badge = page.locator("dl.facts .error-badge")
        assert badge.inner_text() == "incomplete"
        assert (badge.get_attribute("title") or "").startswith("Its command stopped")
