"""What N samples of one judged item say about the judge (`review --samples N`, `sxs --samples N`):
per item the mean, the unbiased variance and whether the N scores agree; per dimension the
agreement rate, the mean pairwise agreement and the judge's sampling variance of the mean.

Only scored samples count: an unscored sample is not a vote. An item with fewer than two scored
samples has no variance and no agreement, and is left out of those figures (and counted)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

Z95 = 1.959964


@dataclass(frozen=True)
class ItemSamples:
    """The scores of one item's N samples (None: that sample was unscored)."""

    scores: tuple[float | None, ...]

    @property
    def kept(self) -> list[float]:
        return [s for s in self.scores if s is not None]

    @property
    def mean(self) -> float | None:
        kept = self.kept
        return sum(kept) / len(kept) if kept else None

    @property
    def variance(self) -> float | None:
        """Unbiased sample variance of the scored samples (n − 1 denominator)."""
        kept, mean = self.kept, self.mean
        if len(kept) < 2 or mean is None:
            return None
        return sum((s - mean) ** 2 for s in kept) / (len(kept) - 1)

    @property
    def agree(self) -> bool | None:
        kept = self.kept
        return len(set(kept)) == 1 if len(kept) >= 2 else None

    @property
    def pairwise_agreement(self) -> float | None:
        """Share of the pairs of scored samples with the same score."""
        pairs = list(combinations(self.kept, 2))
        return sum(a == b for a, b in pairs) / len(pairs) if pairs else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": len(self.scores),
            "scores": list(self.scores),
            "mean": _round(self.mean),
            "variance": _round(self.variance),
            "agree": self.agree,
            "pairwise_agreement": _round(self.pairwise_agreement),
        }


@dataclass(frozen=True)
class SampleSummary:
    """One dimension's items judged N times each."""

    items: int
    compared: int
    """Items with at least two scored samples (the others have no variance or agreement)."""
    agreement_rate: float | None
    pairwise_agreement: float | None
    variance_mean: float | None
    """Mean per-item sample variance."""
    variance_of_mean: float | None
    """Var of the dimension's mean from judge sampling: Σ vᵢ/kᵢ over the compared items / n²,
    n the scored items (kᵢ scored samples of item i, vᵢ their variance)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "items": self.items,
            "compared_items": self.compared,
            "agreement_rate": _round(self.agreement_rate),
            "pairwise_agreement": _round(self.pairwise_agreement),
            "variance_mean": _round(self.variance_mean),
            "variance_of_mean": _round(self.variance_of_mean, 6),
        }


def summarize_samples(items: Sequence[ItemSamples]) -> SampleSummary:
    compared = [i for i in items if i.agree is not None]
    scored = [i for i in items if i.mean is not None]
    variances = [i.variance for i in compared if i.variance is not None]
    judge_var = sum(
        i.variance / len(i.kept) for i in compared if i.variance is not None
    ) / len(scored) ** 2 if scored else None  # fmt: skip
    return SampleSummary(
        items=len(items),
        compared=len(compared),
        agreement_rate=_share([bool(i.agree) for i in compared]),
        pairwise_agreement=_avg([i.pairwise_agreement for i in compared]),
        variance_mean=_avg(variances),
        variance_of_mean=judge_var if compared else None,
    )


def normal_ci(value: float, variance: float, scale: float = 1.0) -> tuple[float, float]:
    """95% normal interval of `value` with `variance` (both already on the `scale`d axis)."""
    half = Z95 * math.sqrt(max(variance, 0.0)) * scale
    return value - half, value + half


def _share(flags: Sequence[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def _avg(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)
