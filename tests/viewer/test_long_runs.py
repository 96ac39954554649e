"""A trajectory of thousands of steps: the API sends it a page at a time (with the whole phase
timeline), and the page loads more steps on demand, also when a timeline segment past the loaded
steps is clicked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from starlette.testclient import TestClient

import agentlens
from agentlens.process.labeler import label_trajectory
from agentlens.store import Run, digest, open_store
from agentlens.store.records import import_records
from agentlens.trajectory import Trajectory
from agentlens.viewer import create_app
from agentlens.viewer.payload import STEP_PAGE
from tests.viewer.conftest import HUNDRED_STEPS

REPEAT = 12


def long_trajectory() -> Trajectory:
    """A real 100-step run repeated: over a thousand steps, indices renumbered."""
    (real,) = agentlens.read_path(HUNDRED_STEPS)
    steps = [
        msgspec.structs.replace(step, index=i)
        for i, step in enumerate(s for _ in range(REPEAT) for s in real.steps)
    ]
    return msgspec.structs.replace(real, id=real.id + "-long", steps=steps)


@pytest.fixture(scope="module")
def long_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Trajectory]:
    path = tmp_path_factory.mktemp("viewer-long") / "store.db"
    long = long_trajectory()
    with open_store(str(path)) as store:
        store.save(Run(kind="import", scorer="import/1"), [long], import_records([long]))
    return path, long


@pytest.fixture
def client(long_store: tuple[Path, Trajectory]) -> Iterator[TestClient]:
    with TestClient(create_app(str(long_store[0])), base_url="http://127.0.0.1") as opened:
        yield opened


def test_steps_come_a_page_at_a_time_with_the_whole_timeline(
    client: TestClient, long_store: tuple[Path, Trajectory]
) -> None:
    _, long = long_store
    assert len(long.steps) > 2 * STEP_PAGE
    first = client.get(f"/api/trajectories/{digest(long)}").json()
    assert (first["steps_total"], first["steps_offset"]) == (len(long.steps), 0)
    assert [s["index"] for s in first["steps"]] == list(range(STEP_PAGE))
    labels = label_trajectory(long)
    assert [(t["index"], t["stage"]) for t in first["timeline"]] == [
        (i, stage) for i, stage in enumerate(labels) if stage
    ]
    last = client.get(f"/api/trajectories/{digest(long)}", params={"offset": 2 * STEP_PAGE}).json()
    assert [s["index"] for s in last["steps"]] == list(range(2 * STEP_PAGE, len(long.steps)))
    beyond = client.get(f"/api/trajectories/{digest(long)}", params={"offset": 10**6}).json()
    assert beyond["steps"] == []
    assert client.get(f"/api/trajectories/{digest(long)}", params={"limit": "x"}).status_code == 400


def test_the_page_loads_more_steps_on_demand(
    browser: Any,
    long_store: tuple[Path, Trajectory],
) -> None:
    from tests.viewer.server import running

    path, long = long_store
    labels = label_trajectory(long)
    last_staged = max(i for i, stage in enumerate(labels) if stage)
    with running(path) as server:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{server.url}#/trajectories/{digest(long)}")
        page.wait_for_selector("li.step")
        assert page.locator("li.step").count() == STEP_PAGE
        assert page.locator(".strip .seg").count() == sum(1 for s in labels if s)
        page.click("button.more-steps")
        page.wait_for_selector(f"#step-{2 * STEP_PAGE - 1}")  # (the page's CSP forbids eval)
        assert page.locator("li.step").count() == 2 * STEP_PAGE
        page.locator(".strip .seg").last.click()  # past the loaded steps: loads up to it
        page.wait_for_selector(f"#step-{last_staged}")
        assert page.evaluate("document.activeElement.id") == f"step-{last_staged}"
        assert page.locator("li.step").count() == len(long.steps)
        assert page.locator("button.more-steps").count() == 0
        page.close()
    assert errors == []
