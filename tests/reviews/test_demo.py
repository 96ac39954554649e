"""The reviews part of `agentlens demo` without the LLM: formal checks pass on the scripted fix,
telemetry of the real trace is printed, and the skipped judge part says how to enable it."""

from __future__ import annotations

from rich.console import Console

from agentlens.demo.reviews import run_review_demo
from agentlens.formats.stream import read_paths
from tests.conftest import BENCH


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
