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
drops those ties and gives smaller p-values (30 lattice scores: p 0.035 vs the released 0.018).

Beside it, the conservative trinomial (win/tie/loss) test of the released `statistics.py`
(`conservative_trinomial_test`), reported only: the spec says it is not used in the comparison
path, so it never changes the warning/alert flags. Its statistic also ties between outcomes; the
default compares it exactly (integers), `profile="released"` repeats the released float
comparison, which drops some ties (N = 20, W/T/L 5/12/3: p 0.311 vs the released 0.286)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy.special import gammaln

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


TRINOMIAL_MAX_N = 500
# p_tie ∈ linspace(0.05, 0.95, 10) is k/20 for odd k, so 80·T = 80(w − l) + |k·N − 20t| is an
# integer and outcomes that tie with T_obs compare equal, with no float tolerance.
TIE_NUMERATORS = tuple(range(1, 20, 2))
RELEASED_TIE_GRID = np.linspace(0.05, 0.95, 10)

TrinomialProfile = Literal["default", "released"]
"""`released`: the released float statistic (as `ties="released"` of the permutation test) and
p = −1 for N > 500; `default`: exact ties, and no p (None, with a reason) for N > 500."""

Outcomes = tuple[np.ndarray, np.ndarray, np.ndarray]


@dataclass(frozen=True)
class TrinomialResult:
    """Win/tie/loss counts (win = run B better, the permutation test's Agent 2 − Agent 1
    orientation) and the conservative trinomial p; `p_tie` is the null that gave the max."""

    wins: int
    ties: int
    losses: int
    p_value: float | None
    p_tie: float | None = None

    @property
    def n(self) -> int:
        return self.wins + self.ties + self.losses

    @property
    def reason(self) -> str:
        counts = f"W/T/L {self.wins}/{self.ties}/{self.losses} (B better/tie/A better)"
        if self.p_tie is None:
            shown = "p = −1 as released" if self.p_value == -1 else "no p"
            return f"{counts}, N = {self.n} > {TRINOMIAL_MAX_N}: not enumerated, {shown}"
        margin, expected = self.wins - self.losses, self.p_tie * self.n
        observed = margin + abs(expected - self.ties) / 4
        return (
            f"{counts}; T = w − l + abs(p_tie·N − t)/4, p = max over p_tie ∈ 0.05…0.95 of "
            f"P(T ≥ T_obs) with p_win = p_loss = (1 − p_tie)/2, N = {self.n}; max at "
            f"p_tie = {self.p_tie:.2f}: T_obs = {margin} + abs({expected:g} − {self.ties})/4 "
            f"= {observed:g}, p = {self.p_value:.4g}; one-sided (B better), not used in the flags"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "test": "conservative trinomial, one-sided (B better); reported, not used in the flags",
            "wins": self.wins,
            "ties": self.ties,
            "losses": self.losses,
            "p_value": self.p_value,
            "p_tie": self.p_tie,
            "reason": self.reason,
        }


def win_tie_loss(scores: Sequence[float | None]) -> tuple[int, int, int]:
    """Counts of scores > 0 (run B better), = 0 and < 0; None dropped. A task-mean of lattice
    scores can miss 0 by a rounding error, so |score| ≤ 1e-12 is a tie."""
    kept = np.array([s for s in scores if s is not None], dtype=float)
    wins, losses = int(np.sum(kept > EPS)), int(np.sum(kept < -EPS))
    return wins, len(kept) - wins - losses, losses


def _outcomes(n: int) -> Outcomes:
    """Every (wins, ties, losses) with w + t + l = n, as three integer arrays."""
    wins, ties = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    possible = wins + ties <= n
    return wins[possible], ties[possible], n - wins[possible] - ties[possible]


def _p_tie(k: int, profile: TrinomialProfile) -> float:
    return float(RELEASED_TIE_GRID[TIE_NUMERATORS.index(k)]) if profile == "released" else k / 20


def _statistic(outcomes: Outcomes, k: int, profile: TrinomialProfile) -> np.ndarray:
    """T of each outcome under p_tie = k/20: × 80, in integers; `released`, in the released
    float arithmetic with p_tie from np.linspace."""
    wins, ties, losses = outcomes
    n = wins + ties + losses
    if profile == "released":
        return wins - losses + np.abs(_p_tie(k, profile) * n - ties) / 4
    return 80 * (wins - losses) + np.abs(k * n - 20 * ties)


def _null_pmf(outcomes: Outcomes, p_tie: float) -> np.ndarray:
    """Trinomial probabilities of the outcomes with p_win = p_loss = (1 − p_tie) / 2."""
    wins, ties, losses = outcomes
    n = wins + ties + losses
    log_coefficient = gammaln(n + 1) - gammaln(wins + 1) - gammaln(ties + 1) - gammaln(losses + 1)
    log_p = (wins + losses) * np.log((1 - p_tie) / 2) + ties * np.log(p_tie)
    return np.exp(log_coefficient + log_p)


def _upper_tail(observed: Outcomes, outcomes: Outcomes, k: int, profile: TrinomialProfile) -> float:
    """P(T ≥ T_obs) over `outcomes` (all of the same N) under the null p_tie = k/20."""
    extreme = _statistic(outcomes, k, profile) >= _statistic(observed, k, profile)[0]
    return min(float(np.sum(_null_pmf(outcomes, _p_tie(k, profile))[extreme])), 1.0)


def conservative_trinomial_test(
    wins: int, ties: int, losses: int, profile: TrinomialProfile = "default"
) -> TrinomialResult:
    """The released `conservative_trinomial_test`, by exact enumeration.

    Statistic T = w − l + |p_tie·N − t| / 4: the win margin plus a quarter of the tie count's
    distance from its expectation. The tail is one-sided, P(T ≥ T_obs) over all outcomes with the
    same N under p_win = p_loss = (1 − p_tie)/2, outcomes tying with T_obs counted as extreme (the
    released `>=`); small p = run B wins more than indifference explains. p is the max of that
    tail over p_tie ∈ linspace(0.05, 0.95, 10), an upper bound over the unknown tie rate, not
    rounded. N = 0 has one outcome, T = T_obs, so p = 1. N > 500 is not enumerated (see
    `TrinomialProfile`).
    """
    n = wins + ties + losses
    if n > TRINOMIAL_MAX_N:
        return TrinomialResult(wins, ties, losses, -1.0 if profile == "released" else None)
    observed: Outcomes = (np.array([wins]), np.array([ties]), np.array([losses]))
    outcomes = _outcomes(n)
    tails = [_upper_tail(observed, outcomes, k, profile) for k in TIE_NUMERATORS]
    worst = int(np.argmax(tails))
    return TrinomialResult(wins, ties, losses, tails[worst], TIE_NUMERATORS[worst] / 20)


def trinomial_from_scores(
    scores: Sequence[float | None], profile: TrinomialProfile = "default"
) -> TrinomialResult:
    """The trinomial test on the win/tie/loss counts of the permutation test's input."""
    return conservative_trinomial_test(*win_tie_loss(scores), profile=profile)
