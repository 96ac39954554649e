"""Pass/fail separation of a score: AUROC with a stratified bootstrap CI, and the two-sample KS test.

AUROC is the Mann-Whitney probability that a passing run outscores a failing one, ties counting one
half: `AUROC = (R_pass − n_pass(n_pass+1)/2) / (n_pass·n_fail)` with `R_pass` the sum of the
passing runs' mid-ranks. The CI resamples passing and failing runs separately (so every resample
has both classes) and takes the percentile interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

BOOTSTRAPS = 2000


@dataclass(frozen=True)
class Separation:
    """How well one score separates passing from failing runs."""

    signal: str
    n_pass: int
    n_fail: int
    auroc: float
    ci_low: float
    ci_high: float
    ks: float
    ks_p: float
    reason: str


def auroc(passing: Sequence[float], failing: Sequence[float]) -> float:
    """P(score of a passing run > score of a failing run) + ½·P(tie); NaN if a class is empty."""
    from scipy import stats as sps  # lazy: `agentlens cohort --help` need not load scipy

    pos, neg = np.asarray(passing, float), np.asarray(failing, float)
    if pos.size == 0 or neg.size == 0:
        return float("nan")
    ranks = sps.rankdata(np.concatenate([pos, neg]))
    rank_sum = ranks[: pos.size].sum()
    return float((rank_sum - pos.size * (pos.size + 1) / 2) / (pos.size * neg.size))


def bootstrap_auroc_ci(
    passing: Sequence[float],
    failing: Sequence[float],
    *,
    n_boot: int = BOOTSTRAPS,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile CI of the AUROC from `n_boot` stratified resamples (fixed `seed`)."""
    pos, neg = np.asarray(passing, float), np.asarray(failing, float)
    if pos.size == 0 or neg.size == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    pos_idx = rng.integers(0, pos.size, (n_boot, pos.size))
    neg_idx = rng.integers(0, neg.size, (n_boot, neg.size))
    if np.isnan(pos).any() or np.isnan(neg).any():  # NaN ranks: as `auroc` does, by rankdata
        values = _auroc_rows(pos[pos_idx], neg[neg_idx])
    else:
        values = _resampled_aurocs(pos, neg, pos_idx, neg_idx)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def _auroc_rows(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    from scipy import stats as sps

    ranks = sps.rankdata(np.concatenate([pos, neg], axis=1), axis=1)
    n_pos, n_neg = pos.shape[1], neg.shape[1]
    return (ranks[:, :n_pos].sum(axis=1) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def _resampled_aurocs(
    pos: np.ndarray, neg: np.ndarray, pos_idx: np.ndarray, neg_idx: np.ndarray, chunk: int = 256
) -> np.ndarray:
    """The AUROC of each resample (a row of indices into `pos` and `neg`), counted rather than
    ranked: U = Σ over distinct values v of (passing draws at v) × (failing draws below v, plus
    half those at v). Every term is a multiple of ½, so U, and U/(n_pass·n_fail), equal the mid-rank
    formula's to the bit, without sorting each resample (5-10x faster). Rows go `chunk` at a time:
    memory is chunk × distinct values."""
    values = np.unique(np.concatenate([pos, neg]))
    pos_at, neg_at = np.searchsorted(values, pos), np.searchsorted(values, neg)
    out = np.empty(pos_idx.shape[0])
    for start in range(0, pos_idx.shape[0], chunk):
        drawn_pass = _value_counts(pos_at[pos_idx[start : start + chunk]], values.size)
        drawn_fail = _value_counts(neg_at[neg_idx[start : start + chunk]], values.size)
        below = np.cumsum(drawn_fail, axis=1) - drawn_fail
        u = (drawn_pass * (below + drawn_fail / 2)).sum(axis=1)
        out[start : start + chunk] = u / (pos_idx.shape[1] * neg_idx.shape[1])
    return out


def _value_counts(value_ids: np.ndarray, n_values: int) -> np.ndarray:
    """Per row, how many times each value id occurs: (rows × n_values)."""
    rows = value_ids.shape[0]
    flat = (value_ids + (np.arange(rows) * n_values)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n_values).reshape(rows, n_values)


def ks_test(passing: Sequence[float], failing: Sequence[float]) -> tuple[float, float]:
    """Two-sample Kolmogorov-Smirnov statistic and p-value (scipy, exact/asymptotic as it chooses)."""
    from scipy import stats as sps

    if len(passing) == 0 or len(failing) == 0:
        return float("nan"), float("nan")
    result = sps.ks_2samp(np.asarray(passing, float), np.asarray(failing, float))
    return float(result.statistic), float(result.pvalue)


def separation(
    signal: str,
    scores: Sequence[float],
    passed: Sequence[bool],
    *,
    n_boot: int = BOOTSTRAPS,
    seed: int = 0,
) -> Separation:
    """AUROC (with CI) and KS of `scores` against the pass/fail labels `passed`."""
    pos = [s for s, p in zip(scores, passed, strict=True) if p]
    neg = [s for s, p in zip(scores, passed, strict=True) if not p]
    value = auroc(pos, neg)
    low, high = bootstrap_auroc_ci(pos, neg, n_boot=n_boot, seed=seed)
    ks, ks_p = ks_test(pos, neg)
    reason = (
        f"AUROC {value:.3f} = P(pass > fail) over {len(pos)}×{len(neg)} pairs, ties ½; "
        f"95% CI [{low:.3f}, {high:.3f}] from {n_boot} stratified bootstraps (seed {seed}); "
        f"KS D = {ks:.3f}, p = {ks_p:.3g}"
    )
    return Separation(signal, len(pos), len(neg), value, low, high, ks, ks_p, reason)
