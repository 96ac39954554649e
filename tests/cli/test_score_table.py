"""What `agentlens score` prints: its table says the scale of each figure."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import BENCH

TASK = BENCH / "trajectories" / "psf__requests-1724"


def test_the_score_table_says_each_columns_scale(
    run_cli: Callable[..., object], tmp_path: Path
) -> None:
    """struct 11.1 and cov 28.6 (0–100) stood beside coh 0.47 and temp 0.71 (0–1) and waste 13
    with no unit: a reader could not tell a percent from a fraction, or what 13 counted."""
    reference = tmp_path / "ref.json"
    built = run_cli("reference", "build", str(TASK), "-o", str(reference))
    assert built.code == 0, built.err  # type: ignore[attr-defined]
    scored = run_cli("score", str(TASK / "*-logs-gpt-4.1-*"), "--reference", str(reference))
    shown = " ".join(scored.out.split())  # type: ignore[attr-defined]
    assert "score, struct, cov: 0–100; coh, temp: 0–1; waste: wasted steps" in shown
    assert "moved most by: a term's part of the score, in logit units" in shown
