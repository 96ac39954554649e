"""Tiers and verdicts: thresholds per profile, checked on every stored dev row."""

from __future__ import annotations

import csv

import pytest

from agentlens.process.profiles import get_profile
from agentlens.process.tiers import tier, verdict
from tests.conftest import BENCH

ROWS = list(csv.DictReader((BENCH / "annotations" / "trajectories.csv").open()))


def test_stored_tiers_follow_the_sdk_thresholds() -> None:
    config = get_profile("sdk-compat")
    assert len(ROWS) == 399
    for row in ROWS:
        outcome = "passed" if row["passed"] == "True" else "failed"
        assert tier(int(row["quality_score"]), outcome, config)[0] == row["quality_tier"]


def test_stored_verdicts_follow_the_stage_coverage_rules() -> None:
    for row in ROWS:
        terminal = "Reached correct terminal state" in (row["strengths"] or "")
        got = verdict(
            float(row["weighted_score"]),
            float(row["stage_completeness"]),
            float(row["bottleneck_coverage"]),
            terminal,
        )
        assert got == row["verdict"], row["trajectory_id"]


@pytest.mark.parametrize(
    ("score", "outcome", "sdk", "paper"),
    [
        (70, "passed", "ideal", "ideal"),
        (69.9, "passed", "solid", "solid"),
        (46.9, "passed", "lucky", "lucky"),
        (45, "failed", "partial_fail", "off_track"),
        (39, "failed", "off_track", "off_track"),
        (47, "failed", "partial_fail", "partial_fail"),
        (90, "unknown", None, None),
    ],
)
def test_thresholds(score: float, outcome: str, sdk: str | None, paper: str | None) -> None:
    assert tier(score, outcome, get_profile("sdk-compat"))[0] == sdk  # type: ignore[arg-type]
    assert tier(score, outcome, get_profile("paper"))[0] == paper  # type: ignore[arg-type]
    assert str(score) in tier(score, outcome, get_profile("paper"))[1] or outcome == "unknown"  # type: ignore[arg-type]
