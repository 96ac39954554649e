"""The reviews part of `agentlens demo` without the LLM: formal checks pass on the scripted fix,
telemetry of the real trace is printed, and the skipped judge part says how to enable it."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from agentlens.demo.reviews import qi_line, run_review_demo
from agentlens.demo.tour import run_demo
from agentlens.formats.stream import read_paths
from agentlens.providers.bundled import bundled_gguf
from agentlens.reviews import DIMENSIONS
from agentlens.reviews.qi import quality_index
from agentlens.verification import isolation
from agentlens.verification.isolation import INSTALL_HINT, SandboxUnavailableError
from tests.conftest import BENCH, missing


def test_review_demo_without_llm() -> None:
    trajs = read_paths([BENCH / "trajectories" / "psf__requests-1724"]).trajectories
    console = Console(record=True, width=200)
    summary = run_review_demo(console, trajectories=trajs, with_llm=False)
    text = console.export_text()
    assert summary["formal_passed"] is True
    assert "formal checks, scripted fix of a tiny repo: PASS" in text
    assert "3 tests: 3 passed, 0 failed" in text
    assert "telemetry of psf__requests-1724-" in text
    assert "reviews: skipped (run `agentlens demo --llm`" in text or "needs the local model" in text


@pytest.fixture
def no_bubblewrap(monkeypatch: pytest.MonkeyPatch) -> None:
    """Failure injection: this machine has no usable bubblewrap."""

    def no_bwrap() -> str:
        raise SandboxUnavailableError(INSTALL_HINT.format(why="no 'bwrap' on PATH"))

    monkeypatch.setattr(isolation, "bubblewrap", no_bwrap)


@pytest.mark.usefixtures("no_bubblewrap")
def test_review_demo_skips_the_formal_checks_where_bubblewrap_cannot_run(tmp_path: Path) -> None:
    console = Console(record=True, width=300)
    only = ("trajectory reviews",)
    assert (
        run_demo(BENCH / "trajectories" / "psf__requests-1724", console, only, out=str(tmp_path))
        == 0
    )
    text = console.export_text()
    assert "formal checks: skipped (cannot isolate agent-written code" in text
    assert "--no-sandbox" in text
    assert "telemetry of psf__requests-1724-" in text
    assert "failed" not in text


@pytest.mark.usefixtures("no_bubblewrap")
def test_the_demo_scenario_run_is_skipped_where_bubblewrap_cannot_run(tmp_path: Path) -> None:
    if bundled_gguf() is None:
        missing("the section runs only with the local model installed")
    console = Console(record=True, width=300)
    task = BENCH / "trajectories" / "psf__requests-1724"
    assert run_demo(task, console, ("scenario run",), llm=True, out=str(tmp_path)) == 0
    text = console.export_text()
    assert "scenario run: skipped (cannot isolate agent-written code" in text
    assert "failed" not in text


def test_a_judge_answer_left_unscored_makes_the_demo_exit_1(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`agentlens review` exits 1 when a judge call fails; the demo printed "unscored (timed
    out …)" in its table and exited 0. Failure injection: one of five answers is unscored."""
    import agentlens.demo.reviews as reviews

    def one_unscored(console: Console, **_: object) -> dict[str, object]:
        console.print("reviews table")
        return {"unscored": 1, "reviews": 5}

    monkeypatch.setattr(reviews, "run_review_demo", one_unscored)
    console = Console(record=True, width=200)
    code = run_demo(BENCH, console, ("trajectory reviews",), llm=True)
    text = console.export_text()
    assert code == 1, text
    assert "section 'trajectory reviews' failed: 1 of 5 judge answers unscored" in text


def test_an_na_quality_index_says_why_once() -> None:
    """`agentlens demo --llm` without pytest printed `QI n/a = n/a: no scored item for Formal`:
    an equation of two n/a's, and no pointer to the formal check that was not scored."""
    judged = dict.fromkeys(DIMENSIONS, 0.5)
    assert qi_line(quality_index(None, judged)) == (
        "QI n/a: no scored item for Formal (the formal checks above were not scored)"
    )
    assert qi_line(quality_index(1.0, judged)) == (
        "QI 58.33 = 100 × (1 + 0.5 + 0.5 + 0.5 + 0.5 + 0.5) / 6 = 58.33"
    )
