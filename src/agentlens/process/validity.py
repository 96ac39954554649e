"""Validity figures of a process score (docs/validity.md): pass/fail AUROC with a task-level
bootstrap CI, the boundary that best separates passing from failing runs (balanced accuracy) and
the tier shares, beside the paper's claims. Used by `agentlens cohort` and `scripts/fit_profile.py`.

The CI resamples TASKS with replacement (all runs of a drawn task come along) and pools the runs
of each resample: the runs of one task share a reference and are not independent, so a run-level
bootstrap would be too narrow.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from agentlens.process.cohort_rows import failed, passed, signal
from agentlens.process.composite import outcome_term
from agentlens.process.profiles import get_profile

PAPER_AUROC = 0.766
PAPER_IDEAL_PERCENT = 20.2
PAPER_LUCKY_PERCENT = 10.7
PAPER_PARTIAL_FAIL_PERCENT = 54.9
"""The paper's tier shares (Fig. 1, 47 tasks; spec §13.2)."""
BOOTSTRAPS = 2000


def auroc(scores: ArrayLike, passed: ArrayLike) -> float:
    """P(a passing run outscores a failing one), ties ½; NaN without both classes."""
    s, y = np.asarray(scores, float), np.asarray(passed, bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = _midranks(s)
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _midranks(values: np.ndarray) -> np.ndarray:
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values))
    ranks[order] = np.arange(1, len(values) + 1)
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=ranks)
    return np.asarray(sums[inverse] / counts[inverse])


def balanced_accuracy(scores: ArrayLike, passed: ArrayLike, boundary: float) -> float:
    """½·(share of passing runs ≥ boundary + share of failing runs < boundary)."""
    s, y = np.asarray(scores, float), np.asarray(passed, bool)
    if y.all() or not y.any():
        return float("nan")
    return float(((s[y] >= boundary).mean() + (s[~y] < boundary).mean()) / 2)


def best_boundary(scores: ArrayLike, passed: ArrayLike) -> float:
    """The score (rounded to 0.1, lowest on a tie) with the highest balanced accuracy."""
    grid = np.unique(np.round(np.asarray(scores, float), 1))
    values = [balanced_accuracy(scores, passed, b) for b in grid]
    return float(grid[int(np.nanargmax(values))])


def rare_among_failures(scores: ArrayLike, passed: ArrayLike, rate: float) -> float:
    """The lowest score (rounded up to 0.1) that at most `rate` of the failing runs reach."""
    failing = np.sort(np.asarray(scores, float)[~np.asarray(passed, bool)])[::-1]
    allowed = int(np.floor(rate * len(failing)))
    if allowed >= len(failing):
        return float(np.ceil(failing[-1] * 10) / 10)
    return round(float(np.floor(failing[allowed] * 10) / 10 + 0.1), 1)


def task_bootstrap(
    values: ArrayLike,
    passed: ArrayLike,
    tasks: ArrayLike,
    statistic: str = "auroc",
    *,
    boundary: float | None = None,
    n_boot: int = BOOTSTRAPS,
    seed: int = 0,
) -> tuple[float, float]:
    """95 % percentile CI of the pooled AUROC (or of the balanced accuracy at `boundary`) over
    `n_boot` resamples of the tasks (fixed `seed`); NaN for one task, whose every resample is
    itself (a CI of zero width would claim a certainty one task cannot give)."""
    s, y, t = np.asarray(values, float), np.asarray(passed, bool), np.asarray(tasks)
    names = np.unique(t)
    if len(names) < 2:
        return float("nan"), float("nan")
    members = [np.flatnonzero(t == name) for name in names]
    rng = np.random.default_rng(seed)
    found = []
    for _ in range(n_boot):
        idx = np.concatenate([members[i] for i in rng.integers(0, len(names), len(names))])
        if statistic == "auroc":
            found.append(auroc(s[idx], y[idx]))
        else:
            found.append(balanced_accuracy(s[idx], y[idx], float(boundary or 0.0)))
    low, high = np.nanpercentile(found, [2.5, 97.5])
    return float(low), float(high)


@dataclass(frozen=True)
class Validity:
    """One profile's figures on a set of scored runs."""

    profile: str
    n_pass: int
    n_fail: int
    n_tasks: int
    auroc: float
    ci_low: float
    ci_high: float
    boundary: float
    balanced_accuracy: float
    ideal_percent: float
    lucky_percent: float
    partial_fail_percent: float
    in_fit: int = 0  # of the n_tasks, those whose runs the profile was fitted on
    lucky_cut: float | None = None
    """The process score below which a pass is Lucky, where it is not `boundary` (sdk-compat:
    47 less the +10 a pass gets, 37); `balanced_accuracy` still cuts every run at `boundary`."""
    pass_term: float = 0.0
    """What the outcome adds to a pass's composite (sdk-compat: 10)."""


def validity(
    profile: str,
    scores: Sequence[float],
    passed: Sequence[bool],
    tasks: Sequence[str],
    tiers: Sequence[str | None],
    boundary: float,
    *,
    n_boot: int = BOOTSTRAPS,
    fitted_on: Collection[str] = (),
    lucky_cut: float | None = None,
    pass_term: float = 0.0,
) -> Validity:
    """`scores` without any outcome term; `tiers` as the profile assigned them; `fitted_on`, the
    tasks the profile's constants were fitted on (their runs' figures are in-sample)."""
    y = np.asarray(passed, bool)
    n_pass, n_fail = int(y.sum()), int((~y).sum())
    low, high = task_bootstrap(scores, passed, tasks, n_boot=n_boot)

    def share(name: str, base: int) -> float:
        return 100.0 * sum(1 for t in tiers if t == name) / base if base else float("nan")

    return Validity(
        profile, n_pass, n_fail, len(set(tasks)), auroc(scores, passed), low, high, boundary,
        balanced_accuracy(scores, passed, boundary), share("ideal", n_pass),
        share("lucky", n_pass), share("partial_fail", n_fail), len(set(tasks) & set(fitted_on)),
        None if lucky_cut == boundary else lucky_cut, pass_term,
    )  # fmt: skip


def cohort_validity(
    rows: Sequence[Mapping[str, object]], profile: str, *, n_boot: int = BOOTSTRAPS
) -> Validity | None:
    """The profile's figures on scored cohort rows (outcome term removed); None without both a
    pass and a failure. The boundary is the profile's failing-tier threshold, one cut for every
    run: a cut that moved with the outcome (sdk-compat's Lucky cut) would score the outcome."""
    known = [r for r in rows if passed(r) or failed(r)]
    if not any(passed(r) for r in known) or all(passed(r) for r in known):
        return None
    config = get_profile(profile)
    return validity(
        profile,
        [signal(r, "process_only") for r in known],
        [passed(r) for r in known],
        [str(r.get("task_id")) for r in known],
        [r.get("quality_tier") for r in known],  # type: ignore[misc]
        config.partial_fail_min,
        n_boot=n_boot,
        fitted_on=config.fitted_on,
        lucky_cut=config.lucky_below - outcome_term(config, "passed"),
        pass_term=outcome_term(config, "passed"),
    )
