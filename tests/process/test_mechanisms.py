"""Lucky-Pass mechanisms, failure reasons and strengths: rules, priority, named thresholds, and the
C1 rule on the stored dev rows."""

from __future__ import annotations

import csv

import pytest

from agentlens.process.mechanisms import failure_reasons, mechanism, strengths
from agentlens.process.profiles import get_profile
from agentlens.process.signals.workflow import StageCoverage
from tests.conftest import BENCH

PAPER = get_profile("paper")


@pytest.mark.parametrize(
    ("n", "waste", "v", "i", "want"),
    [
        (4, 0, 0.0, 100.0, "C1"),
        (4, 0, 10.0, 100.0, "C5"),  # verified: not C1
        (30, 7, 0.0, 20.0, "C2"),  # waste wins over incomplete implementation
        (45, 3, 50.0, 20.0, "C4"),  # long and low-waste wins over C3
        (20, 2, 50.0, 20.0, "C3"),
        (20, 2, 50.0, 80.0, "C5"),
    ],
)
def test_priority_c1_c2_c4_c3_c5(n: int, waste: int, v: float, i: float, want: str) -> None:
    got, reason = mechanism(
        PAPER, n_states=n, total_waste=waste, v_coverage=v, i_coverage=i, i_total=3
    )
    assert got == want and reason.endswith(want)


def test_c3_needs_the_failure_reason_that_only_failing_verdicts_carry() -> None:
    """Spec §11.1: C3 "carries an incomplete-implementation failure reason"; §11.3: reasons are
    built only for FAIL / LIKELY FAIL / UNCERTAIN. With a PASS / LIKELY PASS verdict there is no
    reason, so a low-I-coverage Lucky pass falls through to C5."""
    args = {"n_states": 20, "total_waste": 2, "v_coverage": 50.0, "i_coverage": 20.0, "i_total": 5}
    assert mechanism(PAPER, **args, failing_verdict=True)[0] == "C3"
    got, reason = mechanism(PAPER, **args, failing_verdict=False)
    assert got == "C5" and "passing verdict" in reason


def test_thresholds_are_named_parameters() -> None:
    strict = get_profile("paper", c2_min_waste=10, c4_min_states=60)
    assert (
        mechanism(strict, n_states=45, total_waste=7, v_coverage=50, i_coverage=90, i_total=2)[0]
        == "C5"
    )


def test_c1_rule_on_the_stored_lucky_rows() -> None:
    rows = [r for r in csv.DictReader((BENCH / "annotations" / "trajectories.csv").open())]
    lucky = [r for r in rows if r["quality_tier"] == "lucky"]
    c1 = [
        r
        for r in lucky
        if mechanism(
            get_profile("sdk-compat"),
            n_states=int(r["n_states"]),
            total_waste=int(r["total_wasted_steps"]),
            v_coverage=float(r["stage_coverage_V"]),
            i_coverage=float(r["stage_coverage_I"]),
            i_total=1,
        )[0]
        == "C1"
    ]
    assert lucky and all(int(r["n_states"]) <= 8 for r in c1)
    # the paper's C1 case study (requests-1724, Opus 4.6, 4 states) is among them
    assert any(r["trajectory_id"].endswith("opus-4.6-pass-25038457597_pta") for r in c1)


def test_failure_reasons_and_strengths_text() -> None:
    cov = StageCoverage({"E": 4, "I": 2, "V": 4}, {"E": 4, "I": 0, "V": 0})
    reasons = failure_reasons(2, 25, cov, coherence=0.2, coverage=16.0)
    assert [r.reason for r in reasons] == [
        "early_divergence",
        "missing_verification",
        "incomplete_implementation",
        "trajectory_thrashing",
    ]
    assert reasons[0].detail == "Diverged at step 3 of 25 ground-truth steps (8% through)"
    assert strengths(cov, 0.8, True) == [
        "Strong exploration phase (100% covered)",
        "Clean forward progression (high coherence)",
        "Reached correct terminal state",
    ]
