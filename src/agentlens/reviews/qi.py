"""Quality Index (spec §7): QI = 100 × (FV + ER + IC + PF + PL + TC) / 6, where FV is the formal
pass rate and the rest are the five judge means on the {0, 0.5, 1} scale.

A component without a scored item makes the QI n/a, with the reason: a mean over nothing is not
0, and a QI that silently counted it as 0 would be a number nobody measured. The released
evaluator's rule (a missing metric counts as 0, with a warning) stays available as
`missing="zero"`. FV < 0.3 warns of possible repository corruption.

With reviews judged N > 1 times per item (`review --samples N`), the QI carries the judge's
sampling variance into a 95% CI: each judge mean m_d has Var(m_d) = Σ vᵢ/kᵢ / n² (item i's
sample variance over its kᵢ scored samples, n scored items; `samples.SampleSummary`), the
components are independent, and Var(QI) = (100/6)² × Σ_d Var(m_d); CI = QI ± 1.96·√Var(QI).
The formal pass rate is deterministic and adds nothing. This is the spread of re-judging the
same trajectories, not of drawing other tasks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentlens.errors import ConfigError
from agentlens.list_text import counted
from agentlens.reviews import DIMENSIONS
from agentlens.reviews.documents import (
    formal_of,
    load_reviews,
    reviewed_dimensions,
    unscored_scenarios,
    verifier_counts_of,
)
from agentlens.reviews.judge.judge import TrajectoryReview, aggregate
from agentlens.reviews.judge.samples import normal_ci
from agentlens.reviews.verify_match import (
    MatchedResults,
    reviewed_results,
    sourced_verify_results,
)

COMPONENTS: tuple[str, ...] = ("Formal", *DIMENSIONS)
Missing = Literal["na", "zero"]


@dataclass
class QualityIndex:
    value: float | None
    """None: n/a, `na_reason` says which component had no scored item."""
    components: dict[str, float | None]
    warnings: list[str] = field(default_factory=list)
    na_reason: str | None = None
    judge_variance: dict[str, float] = field(default_factory=dict)
    """Var(m_d) from judge sampling per judge component (`review --samples N`); empty: none."""

    @property
    def variance(self) -> float | None:
        if self.value is None or not self.judge_variance:
            return None
        return (100 / 6) ** 2 * sum(self.judge_variance.values())

    @property
    def ci(self) -> tuple[float, float] | None:
        variance = self.variance
        return None if variance is None or self.value is None else normal_ci(self.value, variance)

    @property
    def reason(self) -> str:
        if self.value is None:
            return f"n/a: {self.na_reason}"
        terms = " + ".join(f"{v if v is not None else 0:.4g}" for v in self.components.values())
        return f"100 × ({terms}) / 6 = {self.value:.2f}{self._ci_reason()}"

    def _ci_reason(self) -> str:
        ci, variance = self.ci, self.variance
        if ci is None or variance is None:
            return ""
        terms = " + ".join(f"{v:.4g}" for v in self.judge_variance.values())
        return (
            f"; judge sampling: Var(QI) = (100/6)² × ({terms}) = {variance:.4g}, "
            f"95% CI {self.value:.2f} ± 1.96 × {variance**0.5:.3g} = [{ci[0]:.2f}, {ci[1]:.2f}]"
        )

    @property
    def shown(self) -> str:
        """The value as printed: two decimals, or "n/a"."""
        return "n/a" if self.value is None else f"{self.value:.2f}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "quality_index": None if self.value is None else round(self.value, 2),
            "components": self.components,
            "warnings": self.warnings,
            "reason": self.reason,
            **({"ci95": [round(self.ci[0], 2), round(self.ci[1], 2)]} if self.ci else {}),
            **({"judge_variance": self.judge_variance} if self.judge_variance else {}),
        }


def quality_index(
    formal: float | None,
    judge_means: Mapping[str, float | None],
    *,
    missing: Missing = "na",
    judge_variance: Mapping[str, float] | None = None,
) -> QualityIndex:
    """Combine the formal pass rate and the judge means (each in [0, 1]) into the QI; n/a when
    a component is missing, unless `missing="zero"` (the released evaluator's rule).
    `judge_variance`: Var(m_d) from judge sampling, for the CI."""
    components: dict[str, float | None] = {"Formal": formal}
    components.update({d: judge_means.get(d) for d in DIMENSIONS})
    absent = [name for name, v in components.items() if v is None]
    warnings = []
    if missing == "zero":
        warnings = [f"{name} is missing and counts as 0" for name in absent]
    for name, value in components.items():
        if value is not None and not 0.0 <= value <= 1.0:
            warnings.append(f"{name} = {value} is outside [0, 1]; pass fractions, not percents")
    if formal is not None and formal < 0.3:
        warnings.append(f"formal pass rate {formal:.2f} < 0.3: possible repository corruption")
    variance = {d: v for d, v in (judge_variance or {}).items() if d in DIMENSIONS}
    if absent and missing == "na":
        reason = f"no scored item for {', '.join(absent)}"
        return QualityIndex(None, components, warnings, reason, judge_variance=variance)
    total = sum(v for v in components.values() if v is not None)
    return QualityIndex(100.0 * total / 6, components, warnings, judge_variance=variance)


@dataclass
class QiReport:
    """`agentlens qi`: the index, each dimension's unscored rate, the reviewed dimensions that
    are not in the index, and the side metric of individual verifiers passed (spec §7)."""

    result: QualityIndex
    unscored: dict[str, float]
    beside: dict[str, float | None]
    verifiers_passed: dict[str, float | int | None]

    def to_dict(self) -> dict[str, Any]:
        doc = {**self.result.to_dict(), "unscored_rate": self.unscored}
        if self.beside:
            doc["beside_qi"] = self.beside
        if self.verifiers_passed:
            doc["verifiers_passed"] = self.verifiers_passed
        return doc


def qi_report(
    reviews_path: str | None,
    verify_paths: Sequence[str],
    formal: float | None,
    components: Sequence[str],
) -> QiReport:
    """The QI from a reviews file and verify results, or from components given as
    `DIMENSION=MEAN` (which win over the reviews) and a formal pass rate."""
    means: dict[str, float | None] = {}
    unscored: dict[str, float] = {}
    variance: dict[str, float] = {}
    reviewed: list[str] | None = None
    if reviews_path:
        reviews = load_reviews(reviews_path)
        reviewed = [r.trajectory_id for r in reviews]
        for dim, summary in aggregate(reviews, reviewed_dimensions(reviews)).items():
            means[dim] = summary.mean
            unscored[dim] = summary.unscored_rate  # a reviewed dimension has an item
            if summary.samples and summary.samples.variance_of_mean is not None:
                variance[dim] = summary.samples.variance_of_mean
    for item in components:
        dim, sep, text = item.partition("=")
        if not sep:
            raise ConfigError(f"--component {item!r}: expected DIMENSION=MEAN")
        means[dim] = float(text)
        variance.pop(dim, None)  # a given mean has no sampling variance we know of
    verified = _verified(verify_paths, reviewed, reviews_path)
    side: dict[str, float | int | None] = {}
    if verify_paths:
        results = formal_of(verified.results)
        formal = sum(results) / len(results) if results else None
        passed, total = verifier_counts_of(verified.results)
        side = {
            "passed": passed,
            "total": total,
            "fraction": round(passed / total, 4) if total else None,  # 0 of 0 is n/a
        }
    result = quality_index(formal, means, judge_variance=variance)
    result.warnings.extend(verified.warnings)
    skipped = unscored_scenarios(verified.results)
    if skipped:
        result.warnings.append(
            f"{counted(skipped, 'scenario')} not scored (a check skipped: its tool is not installed, and "
            "no check failed); the formal pass rate is over the others"
        )
    beside = {d: mean for d, mean in means.items() if d not in result.components}
    return QiReport(result, unscored, beside, side)


def _verified(
    verify_paths: Sequence[str], reviewed: list[str] | None, reviews_path: str | None
) -> MatchedResults:
    """The verify results the QI counts: with reviews, only those about the reviewed runs."""
    sourced = sourced_verify_results(verify_paths)
    if reviewed is None or reviews_path is None:
        return MatchedResults(sourced)
    return reviewed_results(sourced, reviewed, reviews_path)


def reviews_qi(reviews: Sequence[TrajectoryReview], formal: list[int] | None) -> QualityIndex:
    """A run's QI from its reviews and formal results (`agentlens compare`)."""
    means = {d: s.mean for d, s in aggregate(reviews).items()}
    return quality_index(sum(formal) / len(formal) if formal else None, means)
