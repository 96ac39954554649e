"""Tiers and verdicts: thresholds per profile, checked on every stored dev row."""

from __future__ import annotations

import csv

import pytest

from agentlens.process.profiles import get_profile
from agentlens.process.tiers import tier, verdict
from tests.conftest import BENCH
from tests.process.test_pta import SDK, TASK, bench_reference, bench_split, sdk_merged

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


@pytest.mark.parametrize(
    ("v", "cov", "coh", "sc", "want"),
    [  # spec §9.3, boundaries included
        ("PASS", 70.0, 0.6, 0.75, "ideal"),
        ("LIKELY PASS", 69.9, 0.6, 0.75, "solid"),
        ("PASS", 50.0, 0.4, 0.5, "solid"),
        ("PASS", 50.0, 0.39, 0.5, "lucky"),
        ("UNCERTAIN", 90.0, 1.0, 1.0, "partial_fail"),
        ("FAIL", 40.0, 0.0, 0.5, "partial_fail"),
        ("LIKELY FAIL", 39.9, 0.0, 1.0, "off_track"),
    ],
)
def test_verdict_tier_thresholds(v: str, cov: float, coh: float, sc: float, want: str) -> None:
    from agentlens.process.tiers import verdict_tier

    assert verdict_tier(v, cov, coh, sc) == want


@pytest.mark.skipif(not (SDK / "src").is_dir(), reason="released SDK not present")
def test_verdict_tier_equals_the_released_quality_assessment() -> None:
    """Same donors, same runs: `verdict_tier` equals the release's report.quality_tier."""
    from agentlens.process.score import score_trajectory

    split = bench_split(TASK)
    merged = sdk_merged([d.source.path for d in split.donors])
    from swe_trace_sdk import match, trace

    ref = bench_reference(TASK)
    tiers = []
    for run in split.scored[:12]:
        cand = trace.load(run.source.path, format="trace")
        passed = run.outcome.status == "passed"
        result = match.run(cand, merged, use_llm=False)
        report = match.quality_assessment(result, cand, merged, passed=passed)
        mine = score_trajectory(run, ref, "sdk-compat")
        assert (mine.verdict, mine.verdict_tier) == (report.verdict, report.quality_tier), run.id
        tiers.append(report.quality_tier)
    assert len(set(tiers)) > 1


@pytest.mark.parametrize(
    ("score", "outcome", "profile", "shown"),
    [  # the paper profile's score of sphinx-doc__sphinx-10323 opus-4.5 pass 25069529856 (dev
        # cohort, AgentLens-Bench protocol): its reason read "47 ≤ 70.0 < 70 → solid"
        (69.99147422969287, "passed", "paper", "47 ≤ 69.99 < 70 → solid"),
        (71.76, "passed", "calibrated", "71.76 < 71.8 → lucky"),
        (85.76, "passed", "calibrated", "71.8 ≤ 85.76 < 85.8 → solid"),
        (46.96, "failed", "paper", "46.96 < 47 → off_track"),
        (72.3, "failed", "calibrated", "72.3 ≥ 71.8 → partial_fail"),  # one decimal when it tells
        (40, "failed", "sdk-compat", "40.0 ≥ 40 → partial_fail"),
    ],
)
def test_a_tier_reason_never_contradicts_its_threshold(
    score: float, outcome: str, profile: str, shown: str
) -> None:
    """One decimal hid which side of a threshold a score fell on; the reason shows as many as
    the comparison needs."""
    assert shown in tier(score, outcome, get_profile(profile))[1]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("weighted", "completeness", "bottleneck", "terminal", "want"),
    [  # spec §9.4 at its `ws ≥ 60` threshold, which no stored row sits on
        (60.0, 0.75, 0.0, True, "LIKELY PASS"),  # a stage unmatched: ws ≥ 60 → LIKELY PASS
        (60.0, 0.75, 0.0, False, "UNCERTAIN"),
        (59.99, 0.75, 0.0, True, "LIKELY FAIL"),  # … else ws ≥ 40 → LIKELY FAIL
        (60.0, 1.0, 50.0, True, "LIKELY PASS"),  # every stage matched: ws ≥ 60 & sc ≥ 0.5
        (60.0, 1.0, 50.0, False, "UNCERTAIN"),
        (59.99, 1.0, 50.0, True, "UNCERTAIN"),  # 50 ≤ ws < 60 → UNCERTAIN
    ],
)
def test_verdict_at_the_sixty_threshold(
    weighted: float, completeness: float, bottleneck: float, terminal: bool, want: str
) -> None:
    assert verdict(weighted, completeness, bottleneck, terminal) == want


@pytest.mark.parametrize(
    ("weighted", "completeness", "bottleneck", "terminal", "want"),
    [  # spec §9.4 at its stage-completeness thresholds, which no stored row pins; each pair is
        # the release's `_compute_verdict` on either side of one threshold
        (80.0, 1.0, 0.0, True, "PASS"),  # every stage matched: no cap, though a stage is at 0
        (80.0, 0.99, 0.0, True, "LIKELY PASS"),  # a stage unmatched: capped
        (80.0, 0.75, 50.0, True, "PASS"),  # ws ≥ 75 & sc ≥ 0.75
        (80.0, 0.74, 50.0, True, "LIKELY PASS"),
        (65.0, 0.5, 50.0, True, "LIKELY PASS"),  # ws ≥ 60 & sc ≥ 0.5
        (65.0, 0.49, 50.0, True, "UNCERTAIN"),
        (55.0, 0.25, 50.0, True, "UNCERTAIN"),  # sc < 0.25 → FAIL
        (55.0, 0.24, 50.0, True, "FAIL"),
        (30.0, 0.5, 50.0, True, "LIKELY FAIL"),  # ws < 30 → FAIL
        (29.99, 0.5, 50.0, True, "FAIL"),
    ],
)
def test_verdict_at_the_stage_completeness_thresholds(
    weighted: float, completeness: float, bottleneck: float, terminal: bool, want: str
) -> None:
    assert verdict(weighted, completeness, bottleneck, terminal) == want
