"""AUROC, bootstrap CI and KS against hand-computed values, sklearn-free brute force and scipy."""

from __future__ import annotations

import csv
import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps

from agentlens.process.stats import auroc, bootstrap_auroc_ci, ks_test, separation
from tests.conftest import BENCH


def brute_auroc(pos: list[float], neg: list[float]) -> float:
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p, n in itertools.product(pos, neg))
    return wins / (len(pos) * len(neg))


def test_auroc_by_hand() -> None:
    # pairs (pos, neg): 3>1, 3>2, 3=3 (½), 2>1, 2=2 (½), 2<3 → (1+1+0.5+1+0.5+0)/6
    assert auroc([3, 2], [1, 2, 3]) == pytest.approx(4 / 6)
    assert auroc([1, 2], [3, 4]) == 0.0
    assert auroc([5], [1]) == 1.0
    assert math.isnan(auroc([], [1.0]))


def test_auroc_matches_brute_force_with_ties() -> None:
    rng = np.random.default_rng(7)
    pos = list(rng.integers(0, 10, 40).astype(float))
    neg = list(rng.integers(0, 8, 30).astype(float))
    assert auroc(pos, neg) == pytest.approx(brute_auroc(pos, neg))


def test_auroc_equals_mann_whitney_u_over_pairs() -> None:
    rng = np.random.default_rng(3)
    pos, neg = rng.normal(1, 1, 50), rng.normal(0, 1, 60)
    u = sps.mannwhitneyu(pos, neg).statistic
    assert auroc(list(pos), list(neg)) == pytest.approx(u / (50 * 60))


def test_bootstrap_ci_brackets_the_estimate_and_is_reproducible() -> None:
    rng = np.random.default_rng(11)
    pos, neg = list(rng.normal(0.8, 1, 80)), list(rng.normal(0, 1, 70))
    low, high = bootstrap_auroc_ci(pos, neg, n_boot=500, seed=1)
    assert low < auroc(pos, neg) < high
    assert (low, high) == bootstrap_auroc_ci(pos, neg, n_boot=500, seed=1)
    assert 0.05 < high - low < 0.3
    # a perfect separation has a degenerate interval at 1
    assert bootstrap_auroc_ci([5, 6, 7], [1, 2], n_boot=200) == (1.0, 1.0)


def test_ks_matches_scipy_and_hand_value() -> None:
    d, p = ks_test([1, 2, 3, 4], [3, 4, 5, 6])
    assert d == pytest.approx(0.5)  # largest ECDF gap: at x=2, F_pass 0.5 vs F_fail 0
    assert p == pytest.approx(sps.ks_2samp([1, 2, 3, 4], [3, 4, 5, 6]).pvalue)


def test_release_quality_score_auroc_on_dev_rows() -> None:
    """The released quality_score includes +10 for a pass, so it separates pass/fail well."""
    with (BENCH / "annotations" / "trajectories.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    scores = [float(r["quality_score"]) for r in rows]
    passed = [r["passed"] == "True" for r in rows]
    sep = separation("quality_score", scores, passed, n_boot=300)
    pos = [s for s, p in zip(scores, passed, strict=True) if p]
    neg = [s for s, p in zip(scores, passed, strict=True) if not p]
    assert sep.auroc == pytest.approx(brute_auroc(pos, neg))
    assert sep.n_pass + sep.n_fail == len(rows)
    assert sep.ci_low <= sep.auroc <= sep.ci_high
    assert "AUROC" in sep.reason and "KS" in sep.reason


def test_counted_resample_aurocs_equal_the_mid_rank_formula_to_the_bit() -> None:
    """`bootstrap_auroc_ci` counts each resample's U instead of ranking it; on tied integer
    scores, continuous ones and coarse floats, any chunk size, it gives scipy's mid-rank AUROC
    of every resample exactly (not approximately: the percentiles printed must not move)."""
    from scipy.stats import rankdata

    from agentlens.process.stats import _resampled_aurocs

    rng = np.random.default_rng(4)
    for trial in range(150):
        n_pass, n_fail = int(rng.integers(1, 50)), int(rng.integers(1, 50))
        draw = [lambda n: rng.integers(0, 5, n) * 1.0, lambda n: rng.normal(size=n),
                lambda n: np.round(rng.normal(size=n), 1) * 3.3][trial % 3]  # fmt: skip
        pos, neg = draw(n_pass), draw(n_fail)
        pos_idx = rng.integers(0, n_pass, (300, n_pass))
        neg_idx = rng.integers(0, n_fail, (300, n_fail))
        ranks = rankdata(np.concatenate([pos[pos_idx], neg[neg_idx]], axis=1), axis=1)
        mid_rank = (ranks[:, :n_pass].sum(axis=1) - n_pass * (n_pass + 1) / 2) / (n_pass * n_fail)
        counted = _resampled_aurocs(pos, neg, pos_idx, neg_idx, chunk=int(rng.integers(1, 400)))
        assert np.array_equal(counted, mid_rank), trial
