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


def test_monte_carlo_draws_are_the_released_ones() -> None:
    """Spec §8.4: n > 17 uses default_rng(42) and a 100,000 × n matrix of signs drawn from
    {−1, +1}. On lattice scores (multiples of 0.2) many draws tie with the observed mean; the
    released evaluator's exact float comparison drops about half of them (`released`), the
    default counts them all."""
    x = np.array([0.2, -0.2, 0.4, 0.0, 0.6, 0.2, -0.4, 0.2, 0.2, 0.0] * 3)  # n = 30
    signs = np.random.default_rng(42).choice([-1.0, 1.0], size=(100_000, len(x)))
    stats = np.mean(signs * np.asarray(x.tolist())[None, :], axis=1)
    obs = float(np.mean(x.tolist()))
    released = int(sum(abs(float(v)) >= abs(obs) for v in stats))
    tolerant = int(np.sum(np.abs(stats) >= abs(obs) - 1e-12))
    assert tolerant > released  # the float ties
    assert paired_permutation_test(x.tolist(), ties="released") == round(
        (released + 1) / 100_001, 3
    )
    assert paired_permutation_test(x.tolist()) == round((tolerant + 1) / 100_001, 3)


def test_exact_branch_released_ties_match_the_released_loop() -> None:
    """The released exact test loops over masks, flipping entries and taking float(np.mean)."""
    scores = [0.2, -0.2, 0.4, 0.0, 0.6, 0.2, -0.4, 0.2, 0.2, 0.0, 0.4, 0.2]
    n, obs = len(scores), float(np.mean(scores))
    extreme = 0
    for mask in range(1 << n):
        flipped = [(-scores[i] if (mask >> i) & 1 else scores[i]) for i in range(n)]
        extreme += abs(float(np.mean(flipped))) >= abs(obs)
    released = round((extreme + 1) / ((1 << n) + 1), 3)
    assert paired_permutation_test(scores, ties="released") == released
    assert paired_permutation_test(scores) >= released
