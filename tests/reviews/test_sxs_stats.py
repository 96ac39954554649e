"""SxS statistics: Pitfalls burden mapping and the sign-flip permutation test, checked against
hand-computed values and scipy's permutation test."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from agentlens.reviews.sxs.mapping import burden_total, pitfalls_score
from agentlens.reviews.sxs.stats import paired_permutation_test, score_flags


def test_burden_total_doubles_repeated() -> None:
    # high repeated = 14, medium once = 3, low repeated = 2
    assert burden_total([("high", True), ("Medium", False), ("low", True)]) == 19


@pytest.mark.parametrize(
    ("t1", "t2", "score"),
    [
        (0, 3, 0),
        (0, 4, -1),
        (10, 4, 1),
        (0, 10, -2),
        (0, 11, -3),
        (22, 0, 4),
        (0, 23, -5),
        (40, 0, 5),
        (7, 7, 0),
    ],
)
def test_pitfalls_mapping_table(t1: int, t2: int, score: int) -> None:
    result = pitfalls_score(t1, t2)
    assert result.score == score
    assert result.line == f"Totals: A1={t1}, A2={t2}, Delta={t2 - t1} => Score={score}"


def test_exact_test_by_hand() -> None:
    # n = 3, scores (0.2, 0.4, 0.6): observed mean 0.4; of the 8 sign vectors only (+,+,+) and
    # (−,−,−) reach |mean| ≥ 0.4, so p = (2 + 1) / (8 + 1).
    assert paired_permutation_test([0.2, 0.4, 0.6]) == round(3 / 9, 3)
    assert paired_permutation_test([0.2, None, 0.4, 0.6]) == round(3 / 9, 3)
    assert paired_permutation_test([]) == 1.0
    # one-sided: only (+,+,+) has mean ≥ 0.4
    assert paired_permutation_test([0.2, 0.4, 0.6], alternative="greater") == round(2 / 9, 3)


def test_exact_test_matches_scipy_null_distribution() -> None:
    x = np.array([0.2, -0.4, 0.6, 0.8, 0.2, 0.0, 1.0, -0.2, 0.4, 0.6])
    res = stats.permutation_test(
        (x,), np.mean, permutation_type="samples", n_resamples=np.inf, alternative="two-sided"
    )
    null = res.null_distribution
    extreme = int(np.sum(np.abs(null) >= abs(x.mean()) - 1e-12))
    assert len(null) == 2**10
    assert paired_permutation_test(x.tolist()) == round((extreme + 1) / (2**10 + 1), 3)


def test_monte_carlo_above_17_is_close_to_exact_and_seeded() -> None:
    rng = np.random.default_rng(7)
    x = rng.choice([-0.4, -0.2, 0.0, 0.2, 0.4, 0.6], size=18)
    # all 2^18 sign vectors from the bits of 0 .. 2^18 − 1
    bits = (np.arange(2**18)[:, None] >> np.arange(18)) & 1
    exact_extreme = int(np.sum(np.abs((1 - 2 * bits) @ x / 18) >= abs(x.mean()) - 1e-12))
    exact = (exact_extreme + 1) / (2**18 + 1)
    p = paired_permutation_test(x.tolist())
    assert p == paired_permutation_test(x.tolist())
    assert abs(p - exact) < 0.01


def test_score_flags() -> None:
    assert (score_flags([0.2] * 3).warning, score_flags([0.2] * 3).alert) == (False, False)
    flags = score_flags([0.6] * 6)  # mean 0.6, p = 3/65 ≈ 0.046
    assert (flags.mean, flags.p_value, flags.warning, flags.alert) == (0.6, 0.046, True, True)
    assert score_flags([-0.2, -0.2]).warning and not score_flags([-0.2, -0.2]).alert
