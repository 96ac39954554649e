"""Composite scores: Eq. 1 by hand, and the released formula recomputed from the stored component
columns of every dev row (banker's rounding, outcome term)."""

from __future__ import annotations

import csv
import math
import re

import pytest

from agentlens.process.composite import eq1, outcome_term, sdk_score
from agentlens.process.profiles import get_profile
from tests.conftest import BENCH

ROWS = list(csv.DictReader((BENCH / "annotations" / "trajectories.csv").open()))


def test_eq1_weights_and_reason() -> None:
    signal = eq1(get_profile("paper"), struct=80.0, cov=60.0, coh=0.5, temp=0.9)
    assert signal.value == pytest.approx(0.20 * 80 + 0.15 * 60 + 0.30 * 50 + 0.35 * 90)
    assert "0.20·80.0" in signal.reason and "0.35·90.0" in signal.reason


def test_eq1_reason_names_each_term_as_the_released_formula_does() -> None:
    """`0.20·20.3 + 0.15·23.3 + …` said which weight was which only to a reader of the paper."""
    signal = eq1(get_profile("paper"), struct=80.0, cov=60.0, coh=0.5, temp=0.9)
    assert signal.reason == (
        "Eq. 1: 0.20·80.0[Φ_struct] + 0.15·60.0[Φ_cov] + 0.30·50.0[100·Φ_coh] "
        "+ 0.35·90.0[100·Φ_temp] = 71.5"
    )


def test_eq1_reason_prints_the_sum_on_its_side_of_every_tier_threshold() -> None:
    """A dev run (sphinx-doc__sphinx-10323 opus-4.5 pass-25069529856, agentlens-bench protocol)
    scores 69.9915: its reason said "= 70.0" beside the tier's "69.99 < 70 → solid"."""
    config = get_profile("paper")
    signal = eq1(
        config, struct=61.5, cov=14.3, coh=0.753, temp=(69.9915 - 12.3 - 2.145 - 22.59) / 35
    )
    assert signal.value == pytest.approx(69.9915)
    assert signal.reason.endswith("= 69.99"), signal.reason
    below_lucky = eq1(config, struct=0.0, cov=0.0, coh=0.0, temp=46.97 / 35)
    assert below_lucky.reason.endswith("= 46.97"), below_lucky.reason
    assert eq1(config, struct=80.0, cov=60.0, coh=0.5, temp=0.9).reason.endswith("= 71.5")


def test_released_score_recomputed_from_the_stored_columns() -> None:
    config = get_profile("sdk-compat")
    assert len(ROWS) == 399
    for row in ROWS:
        signal = sdk_score(
            config,
            cov=float(row["coverage_percent"]),
            coh=float(row["coherence_score"]),
            stage_completeness=float(row["stage_completeness"]),
            workflow=float(row["workflow_similarity"]),
            f1=float(row["f1_score"]),
            outcome="passed" if row["passed"] == "True" else "failed",
        )
        assert signal.value == int(row["quality_score"]), row["trajectory_id"]
        assert _printed_sum_rounds_to_the_score(signal.reason), signal.reason


def _printed_sum_rounds_to_the_score(reason: str) -> bool:
    """What a reader does: round the printed sum half up, unless the reason says half to even."""
    found = re.search(r"= (-?[\d.]+)(, half to even)?\) = (\d+)$", reason)
    assert found, reason
    printed, even, score = float(found.group(1)), found.group(2), int(found.group(3))
    return (round(printed) if even else math.floor(printed + 0.5)) == score


def test_a_sum_a_float_puts_next_to_a_half_is_printed_as_it_rounds() -> None:
    """cov 500/6 and F1 100/6 sum to 47.49999999999999: six decimals print 47.500000, which a
    reader rounds up to 48; the score is 47."""
    config = get_profile("sdk-compat")
    signal = sdk_score(
        config, cov=500 / 6, coh=1, stage_completeness=0, workflow=0, f1=100 / 6, outcome="failed"
    )
    assert signal.value == 47 and _printed_sum_rounds_to_the_score(signal.reason), signal.reason


def test_outcome_term_is_switchable_and_unknown_counts_half() -> None:
    kwargs = {"cov": 50.0, "coh": 0.5, "stage_completeness": 0.5, "workflow": 0.5, "f1": 50.0}
    on = get_profile("sdk-compat")
    off = get_profile("sdk-compat", include_outcome=False)
    assert sdk_score(on, outcome="passed", **kwargs).value == 55  # 45 + 10
    assert sdk_score(on, outcome="unknown", **kwargs).value == 50
    assert sdk_score(off, outcome="passed", **kwargs).value == 45
    # 0.25·50 + 0.25·50 + 0.18·50 + 0.12·50 + 0.10·45 = 44.5 → banker's rounding to 44
    assert sdk_score(off, outcome="failed", **{**kwargs, "f1": 45.0}).value == 44


def test_outcome_term_is_what_the_score_added_for_the_outcome() -> None:
    """`process_only` and the validity cut subtract this term: 10 for a pass, 5 for an unknown
    outcome, nothing for a failure in `sdk-compat`; nothing when switched off or under Eq. 1."""
    sdk = get_profile("sdk-compat")
    assert [outcome_term(sdk, o) for o in ("passed", "unknown", "failed")] == [10.0, 5.0, 0.0]
    off = get_profile("sdk-compat", include_outcome=False)
    assert outcome_term(off, "passed") == outcome_term(get_profile("paper"), "passed") == 0.0


def test_released_score_is_clamped_to_100_when_weights_sum_above_one() -> None:
    """Spec §8.2 clamps to [0, 100]; with the release's weights (sum 1) the clamp never acts, so
    it shows only with an override: 1.0·100 + 0.25·100 + 0.18·100 + 0.12·100 + 0.10·100 +
    0.10·100 = 175 → 100."""
    heavy = get_profile("sdk-compat", sdk_w_cov=1.0)
    full = {"cov": 100.0, "coh": 1.0, "stage_completeness": 1.0, "workflow": 1.0, "f1": 100.0}
    signal = sdk_score(heavy, outcome="passed", **full)
    assert signal.value == 100
    assert "= 175.00), clamped to 0-100 = 100" in signal.reason
