"""Lucky-Pass mechanisms, failure reasons and strengths: rules, priority, named thresholds, and the
C1 rule on the stored dev rows."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from fractions import Fraction

import pytest

from agentlens.process.lucky_profiles import row_mechanism
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
    # exactly the spec §11.2 filter on the columns (10 of the 53 dev Lucky rows), and only the
    # two models Table 14 puts in C1 (17 opus-4.6 and 2 gpt-5.3-codex over all 47 tasks)
    by_filter = [
        r
        for r in lucky
        if int(r["n_states"]) <= 8
        and r["total_wasted_steps"] == "0"
        and float(r["stage_coverage_V"]) == 0
    ]
    assert len(lucky) == 53 and c1 == by_filter
    assert Counter(r["model"] for r in c1) == {"opus-4.6": 8, "gpt-5.3-codex": 2}
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


def _stored_coverage(row: dict[str, str], reasons: list[dict[str, str]]) -> StageCoverage:
    """Per-stage counts that give the row's stored percentages: those a stored reason shows
    (`(3/39 steps)`), else the smallest fraction; a 0 % stage no reason names counts as absent."""
    total, matched = {}, {}
    details = {r["reason"]: r["detail"] for r in reasons}
    shown = {
        "V": re.search(r"\((\d+)/(\d+) steps\)", details.get("missing_verification", "")),
        "I": re.search(r"\((\d+)/(\d+)\)$", details.get("incomplete_implementation", "")),
    }
    for stage in "EIVO":
        share = Fraction(row[f"stage_coverage_{stage}"]).limit_denominator(1000) / 100
        found = shown.get(stage)
        if found:  # a stage none of whose states matched has no `matched` entry
            total[stage] = int(found[2])
            matched.update({stage: int(found[1])} if int(found[1]) else {})
        elif share:
            total[stage], matched[stage] = share.denominator, share.numerator
    return StageCoverage(total, matched)


def test_reasons_and_strengths_reproduce_the_released_columns() -> None:
    """Spec §11.3/§11.4 on every dev row, from its stored coverages and coherence: the release's
    failure reasons (built for failing verdicts only) and strengths come back, name, severity
    and text (rows sit at 50 % I coverage, 80 % stage coverage and coherence 0.7 exactly)."""
    rows = list(csv.DictReader((BENCH / "annotations" / "trajectories.csv").open()))
    for row in rows:
        stored = json.loads(row["failure_reasons"] or "[]")
        coverage = _stored_coverage(row, stored)
        coherence = float(row["coherence_score"])
        terminal = "Reached correct terminal state" in row["strengths"]
        assert strengths(coverage, coherence, terminal) == json.loads(row["strengths"] or "[]")
        if row["verdict"] not in ("FAIL", "LIKELY FAIL", "UNCERTAIN"):
            assert stored == [], row["trajectory_id"]
            continue
        early = re.search(r"step (\d+) of (\d+) ground", stored[0]["detail"]) if stored else None
        index, n_path = (int(early[1]) - 1, int(early[2])) if early else (None, 0)
        got = failure_reasons(index, n_path, coverage, coherence, float(row["coverage_percent"]))
        assert [vars(r) for r in got] == stored, row["trajectory_id"]


@pytest.mark.parametrize(
    ("n", "waste", "v", "i", "i_total", "want"),
    [  # spec §11.2 at each threshold: C1 n ≤ 8, C2 waste ≥ 5, C4 n ≥ 40, C3 I coverage < 50 %
        (8, 0, 0.0, 100.0, 3, "C1"),
        (9, 0, 0.0, 100.0, 3, "C5"),
        (20, 5, 50.0, 100.0, 3, "C2"),
        (20, 4, 50.0, 100.0, 3, "C5"),
        (40, 4, 50.0, 100.0, 3, "C4"),
        (39, 4, 50.0, 100.0, 3, "C5"),
        (20, 4, 50.0, 49.9, 3, "C3"),
        (20, 4, 50.0, 50.0, 3, "C5"),
        (20, 4, 50.0, 0.0, 1, "C3"),
        (20, 4, 50.0, 0.0, 0, "C5"),  # no I step in the path: no incomplete-implementation reason
    ],
)
def test_mechanism_thresholds_at_their_bounds(
    n: int, waste: int, v: float, i: float, i_total: int, want: str
) -> None:
    config = get_profile("sdk-compat")
    got, _ = mechanism(
        config, n_states=n, total_waste=waste, v_coverage=v, i_coverage=i, i_total=i_total
    )
    assert got == want


@pytest.mark.parametrize(
    ("n", "waste", "want"),
    [(8, 0, "C1"), (9, 0, "C5"), (20, 5, "C2"), (20, 4, "C5"), (40, 4, "C4"), (39, 4, "C5")],
)
def test_a_stored_rows_mechanism_follows_the_same_bounds(n: int, waste: int, want: str) -> None:
    """The table path (`row_mechanism`, on the release's columns) at the §11.2 thresholds."""
    row = {
        "quality_tier": "lucky", "passed": True, "n_states": n, "total_wasted_steps": waste,
        "stage_coverage_V": 0.0, "failure_reasons": "[]",
    }  # fmt: skip
    assert row_mechanism(row) == want


def test_failure_reason_thresholds_at_their_bounds() -> None:
    """Spec §11.3, each rule at its threshold (strict `<`); no V (I) step → none to miss."""
    full = StageCoverage({"E": 2, "I": 2, "V": 2}, {"E": 2, "I": 2, "V": 2})

    def names(index: int | None, cov: StageCoverage, coh: float, coverage: float) -> list[str]:
        return [r.reason for r in failure_reasons(index, 5, cov, coh, coverage)]

    assert names(2, full, 0.9, 80.0) == []  # 2/5 = 0.4 is not < 0.4
    assert names(1, full, 0.9, 80.0) == ["early_divergence"]
    assert names(None, full, 0.35, 80.0) == []
    assert names(None, full, 0.3499, 80.0) == ["trajectory_thrashing"]
    assert names(None, full, 0.9, 30.0) == []
    assert names(None, full, 0.9, 29.9) == ["low_coverage"]
    assert names(None, StageCoverage({"E": 2, "I": 2}, {"E": 2, "I": 2}), 0.9, 80.0) == []
    assert names(None, StageCoverage({"E": 2, "V": 2}, {"E": 2, "V": 2}), 0.9, 80.0) == []
    at_bounds = StageCoverage({"V": 4, "I": 2}, {"V": 1, "I": 1})  # V 25 %, I 50 %
    assert names(None, at_bounds, 0.9, 80.0) == []
