"""SxS statistics (spec §8.4): the paired sign-flip permutation test and the score flags.

The test reads per-pair scores (one per repeat pair, or per task with `--pairing task-mean`; see
`sxs.paired_differences`) as paired differences (Agent 2 − Agent 1 orientation), uses the
mean as statistic and, two-sided, counts sign vectors with |mean| ≥ |observed|. Exact over all
2^n sign vectors for n ≤ 17; otherwise 100,000 Monte-Carlo sign vectors from
`numpy.random.default_rng(42)`. p = (extreme + 1) / (draws + 1), rounded to 3 decimals.

Scores are multiples of 0.2, so many sign vectors tie with the observed mean exactly; summed in
floating point, about half of those ties come out a hair below it. By default a 1e-12 tolerance
counts every tie as extreme (the test's definition, |mean| ≥ |observed|). `ties="released"`
reproduces the released evaluator bit for bit: its float means and an exact comparison, which
drops those ties and gives smaller p-values (30 lattice scores: p 0.035 vs the released 0.018)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

EXACT_MAX_N = 17
MC_DRAWS = 100_000
# Float tolerance so that sign vectors tying with the observed mean count as extreme.
EPS = 1e-12

Alternative = Literal["two-sided", "greater", "less"]
Ties = Literal["tolerant", "released"]


def paired_permutation_test(
    scores: Sequence[float | None],
    alternative: Alternative = "two-sided",
    seed: int = 42,
    ties: Ties = "tolerant",
) -> float:
    """p-value of the sign-flip test on `scores` (None dropped); n = 0 gives 1.0."""
    x = np.array([s for s in scores if s is not None], dtype=float)
    n = len(x)
    if n == 0:
        return 1.0
    observed = float(np.mean(x))
    if n <= EXACT_MAX_N:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
    else:
        signs = np.random.default_rng(seed).choice([-1.0, 1.0], size=(MC_DRAWS, n))
    means = np.mean(signs * x[None, :], axis=1)
    eps = EPS if ties == "tolerant" else 0.0
    if alternative == "two-sided":
        extreme = np.sum(np.abs(means) >= abs(observed) - eps)
    elif alternative == "greater":
        extreme = np.sum(means >= observed - eps)
    else:
        extreme = np.sum(means <= observed + eps)
    return round(float((extreme + 1) / (len(signs) + 1)), 3)


@dataclass(frozen=True)
class ScoreFlags:
    mean: float
    p_value: float
    warning: bool
    alert: bool

    @property
    def reason(self) -> str:
        return (
            f"mean {self.mean:+.4f}, p = {self.p_value:.3f}: warning iff mean ≤ −0.2 or ≥ 0.3; "
            f"alert iff p < 0.05 or mean ≤ −0.4 or ≥ 0.5"
        )


def score_flags(scores: Sequence[float | None], ties: Ties = "tolerant") -> ScoreFlags:
    """Warning/alert rules on the per-task scores (each score/5 in [−1, 1])."""
    kept = [s for s in scores if s is not None]
    mean = round(float(np.mean(kept)), 4) if kept else 0.0
    p = paired_permutation_test(kept, ties=ties)
    warning = mean <= -0.2 or mean >= 0.3
    alert = p < 0.05 or mean <= -0.4 or mean >= 0.5
    return ScoreFlags(mean, p, warning, alert)
