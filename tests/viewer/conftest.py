"""A results store built once per session from real shared traces: an import run, a score run
(through the real `agentlens reference build` / `agentlens score --store` commands) and one
hostile trajectory saved through the store's own API."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest

import agentlens
from agentlens.cli import main
from agentlens.store import Run, SqlStore, digest, open_store
from agentlens.store.records import IMPORT_SCORER, import_records
from agentlens.trajectory import Trajectory
from tests.conftest import BENCH, FORMATS

TASK = BENCH / "trajectories" / "psf__requests-1724"
SCORED = sorted(TASK.glob("*.json"))[::5]  # 8 runs, passing and failing
LONG_OBSERVATION = FORMATS / "swe-agent" / "ctf__forensics__flash.traj"
HUNDRED_STEPS = (
    BENCH / "trajectories" / "astropy__astropy-13236"
    / "astropy__astropy-13236-logs-sonnet-4.5-fail-24941916041_pta.json"
)  # fmt: skip
IMG = '<img src=x onerror="window.__pwned=1">'
SCRIPT = "<script>window.__pwned=1</script>"
HOSTILE = f"hostile {IMG} {SCRIPT}"


@dataclass(frozen=True)
class Built:
    path: Path
    import_run: str
    score_run: str
    hostile_run: str
    hostile: str
    """The hostile trajectory's digest."""
    long: str
    hundred: str


def hostile_trajectory() -> Trajectory:
    (real,) = agentlens.read_path(SCORED[0])
    tool = next(i for i, s in enumerate(real.steps) if s.kind == "tool")
    steps = list(real.steps)
    steps[tool] = msgspec.structs.replace(
        steps[tool], command=f"echo {HOSTILE}", observation=f"{HOSTILE}\n" * 3, tool_name=IMG
    )
    return msgspec.structs.replace(real, id=f"{real.id}-{HOSTILE}", steps=steps)


def _save_hostile(store: SqlStore) -> tuple[str, str]:
    trajectory = hostile_trajectory()
    run = Run(kind="import", scorer=IMPORT_SCORER, label=HOSTILE)
    run_id = store.save(run, [trajectory], import_records([trajectory]))
    return run_id, digest(trajectory)


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    folder = tmp_path_factory.mktemp("viewer-store")
    path, reference = folder / "store.db", folder / "reference.json"
    inputs = [*map(str, SCORED), str(LONG_OBSERVATION), str(HUNDRED_STEPS)]
    assert main(["store", "import", *inputs, "--store", str(path)]) == 0
    assert main(["reference", "build", str(TASK), "-o", str(reference)]) == 0
    scored = [*map(str, SCORED), "--reference", str(reference), "--store", str(path)]
    assert main(["score", *scored]) == 0
    with open_store(str(path)) as store:
        score_run = store.runs(kind="score")[0].id
        import_run = store.runs(kind="import")[0].id
        hostile_run, hostile = _save_hostile(store)
        by_path = {r.source.path: d for d, r in _stored(store)}
    long, hundred = by_path[str(LONG_OBSERVATION)], by_path[str(HUNDRED_STEPS)]
    return Built(path, import_run, score_run, hostile_run, hostile, long, hundred)


def _stored(store: SqlStore) -> Iterator[tuple[str, Trajectory]]:
    for row in store.trajectories():
        yield row["digest"], store.trajectory(row["digest"])


@pytest.fixture
def store(built: Built) -> Iterator[SqlStore]:
    with open_store(str(built.path)) as opened:
        yield opened


# Headless Chromium for the browser tests (test_browser.py, test_paging.py, ...); `page` needs a
# `server` fixture from the test module. One Chromium for the viewer package (starting Playwright
# and Chromium costs 2-4 s); each test gets its own context, so no cookies, storage or cache are
# shared. Not the session: a second Playwright (test_stepvalue_report_llm.py) cannot start while
# one runs, so it is closed when this package's tests end.
CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def _missing() -> str | None:
    if importlib.util.find_spec("playwright") is None:
        return "Playwright for Python is not installed (pip install playwright)"
    if not CHROMIUM.exists():
        return f"no Chromium at {CHROMIUM} (apt-get install -y chromium)"
    return None


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    reason = _missing()
    if reason and os.environ.get("CI"):
        pytest.fail(f"browser tests must run under CI: {reason}")
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield launched
        launched.close()


@pytest.fixture
def problems() -> list[str]:
    """Console errors, page errors and failed requests; every test ends with none left."""
    return []


@pytest.fixture
def page(browser: Any, server: Any, problems: list[str]) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    opened.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    opened.on("pageerror", lambda e: problems.append(str(e)))
    opened.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
    yield opened
    context.close()
    assert problems == []
