"""SxS statistics: Pitfalls burden mapping, the sign-flip permutation test and the conservative
trinomial test, checked against hand-computed values, scipy's permutation test and a brute-force
enumeration with scipy's multinomial pmf."""

from __future__ import annotations

import functools
import time
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from agentlens.reviews.compare import Check, RunSummary, compare_runs
from agentlens.reviews.sxs.mapping import burden_total, pitfalls_score
from agentlens.reviews.sxs.stats import (
    conservative_trinomial_test,
    paired_permutation_test,
    score_flags,
    trinomial_from_scores,
    win_tie_loss,
)
from agentlens.reviews.telemetry import RunTelemetry


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


def outcomes_of(n: int) -> list[tuple[int, int, int]]:
    return [(w, t, n - w - t) for t in range(n + 1) for w in range(n - t + 1)]


def brute_force_trinomial(w_obs: int, t_obs: int, l_obs: int) -> float:
    """Spec §8.4 read literally, in exact fractions: max over p_tie of P(T ≥ T_obs)."""
    n = w_obs + t_obs + l_obs
    tails = []
    for k in range(1, 20, 2):  # p_tie = 0.05, 0.15, …, 0.95
        p_tie = Fraction(k, 20)

        def statistic(w: int, t: int, loss: int, p_tie: Fraction = p_tie) -> Fraction:
            return w - loss + abs(p_tie * n - t) / 4

        tail = 0.0
        for w, t, loss in outcomes_of(n):
            if statistic(w, t, loss) >= statistic(w_obs, t_obs, l_obs):
                tail += null_pmf(w, t, loss, k)
        tails.append(tail)
    return max(tails)


@functools.cache
def null_pmf(w: int, t: int, loss: int, k: int) -> float:
    p_win = (1 - k / 20) / 2
    return float(stats.multinomial.pmf([w, t, loss], w + t + loss, [p_win, k / 20, p_win]))


def test_trinomial_by_hand_for_two_pairs() -> None:
    # N = 2, outcomes (w, t, l): (2,0,0) (1,1,0) (1,0,1) (0,2,0) (0,1,1) (0,0,2).
    # Two wins: T_obs = 2 + |p·2 − 0|/4 = 2 + p/2; only (2,0,0) reaches it ((1,1,0) has
    # 1 + |2p − 1|/4 < 2), so the tail is p_win² = ((1 − p)/2)², largest at p = 0.05: 0.475².
    two_wins = conservative_trinomial_test(2, 0, 0)
    assert two_wins.p_value == pytest.approx(0.475**2)  # 0.225625
    assert two_wins.p_tie == 0.05
    # One win, one loss: T_obs = 0 + |2p|/4 = p/2. Only (0,1,1) and (0,0,2) fall below it (their
    # w − l is −1, −2), and (0,2,0) stays above it for p < 0.5 (|2p − 2|/4 ≥ p/2). Tail =
    # 1 − 2·p·p_win − p_win² = 3/4 − p/2 + 3p²/4: at p = 0.05, 0.726875, the max of the grid
    # (p ≥ 0.55 also loses (0,2,0)).
    split = conservative_trinomial_test(1, 0, 1)
    assert split.p_value == pytest.approx(0.726875)
    assert split.p_tie == 0.05
    assert "T_obs = 0 + abs(0.1 − 0)/4 = 0.025, p = 0.7269" in split.reason


@pytest.mark.parametrize("n", [6, 10])
def test_trinomial_matches_brute_force_enumeration(n: int) -> None:
    for w, t, loss in outcomes_of(n):
        expected = brute_force_trinomial(w, t, loss)
        assert conservative_trinomial_test(w, t, loss).p_value == pytest.approx(expected, abs=1e-12)


def test_trinomial_edge_cases() -> None:
    empty = conservative_trinomial_test(0, 0, 0)
    assert (empty.n, empty.p_value) == (0, 1.0)  # one outcome, T = T_obs
    assert trinomial_from_scores([]).p_value == 1.0
    all_ties = trinomial_from_scores([0.0] * 8)
    assert (all_ties.wins, all_ties.ties, all_ties.losses) == (0, 8, 0)
    assert all_ties.p_value == pytest.approx(brute_force_trinomial(0, 8, 0), abs=1e-12)
    assert all_ties.p_tie == 0.95  # 8 ties are most plausible when ties are likely


def test_trinomial_above_500_pairs_is_not_enumerated() -> None:
    default = conservative_trinomial_test(300, 1, 200)
    assert (default.p_value, default.p_tie) == (None, None)
    assert "N = 501 > 500: not enumerated, no p" in default.reason
    released = conservative_trinomial_test(300, 1, 200, profile="released")
    assert released.p_value == -1.0
    assert "p = −1 as released" in released.reason
    start = time.perf_counter()
    at_limit = conservative_trinomial_test(260, 40, 200)  # 125,751 outcomes × 10 nulls
    assert at_limit.p_value is not None and 0 < at_limit.p_value < 1
    assert time.perf_counter() - start < 5


def test_win_tie_loss_counts_near_zero_task_means_as_ties() -> None:
    task_mean = sum([0.6, -0.2, -0.4]) / 3  # −1.9e-17, a tie
    assert win_tie_loss([0.2, None, -0.4, 0.0, task_mean, 1.0]) == (2, 2, 1)


def test_trinomial_released_ties_drop_float_ties() -> None:
    """N = 20, W/T/L 5/12/3: outcomes tying with T_obs in exact arithmetic come out a hair below
    it in the released float arithmetic, which drops them: p 0.311 vs the released 0.286."""
    grid = np.linspace(0.05, 0.95, 10)
    n, obs = 20, (5, 12, 3)
    tails = []
    for p_tie in grid:  # the released loop: float statistic, exact >=
        t_obs = obs[0] - obs[2] + np.abs(p_tie * n - obs[1]) / 4
        p_win = (1 - p_tie) / 2
        tail = 0.0
        for w, t, loss in outcomes_of(n):
            if w - loss + np.abs(p_tie * n - t) / 4 >= t_obs:
                tail += float(stats.multinomial.pmf([w, t, loss], n, [p_win, p_tie, p_win]))
        tails.append(tail)
    released = conservative_trinomial_test(*obs, profile="released").p_value
    assert released == pytest.approx(max(tails), abs=1e-12)
    assert round(released, 3) == 0.286
    default = conservative_trinomial_test(*obs).p_value
    assert default == pytest.approx(brute_force_trinomial(*obs), abs=1e-12)
    assert round(default, 3) == 0.311


def test_trinomial_does_not_change_the_flags() -> None:
    """Nine small wins and two large losses: the trinomial p is below 0.05, yet the flags come
    from the mean and the permutation p only, so nothing is raised, in SxS or in compare."""
    scores = [0.2] * 9 + [-1.0] * 2
    trinomial = trinomial_from_scores(scores)
    assert trinomial.p_value is not None and trinomial.p_value < 0.05
    flags = score_flags(scores)
    assert (flags.p_value, flags.warning, flags.alert) == (1.0, False, False)
    sxs_dimension = {
        "mean_score": flags.mean,
        "p_value": flags.p_value,
        "warning": False,
        "alert": False,
        "reason": flags.reason,
        "trinomial": trinomial.to_dict(),
    }
    run = RunSummary("b", RunTelemetry.of([]), sxs_flags={"EndResult": sxs_dimension})
    (check,) = [
        c
        for c in compare_runs(RunSummary("a", RunTelemetry.of([])), run).checks
        if c.name.startswith("SxS")
    ]
    assert isinstance(check, Check)
    assert (check.p_value, check.warning, check.alert) == (1.0, False, False)
    assert check.detail == f"{flags.reason}; trinomial test: {trinomial.reason}"
    assert "W/T/L 9/0/2" in check.detail and "not used in the flags" in check.detail
