"""Quality Index (spec §7): QI = 100 × (FV + ER + IC + PF + PL + TC) / 6, where FV is the formal
pass rate and the rest are the five judge means on the {0, 0.5, 1} scale. A missing component
counts as 0 and raises a warning; FV < 0.3 warns of possible repository corruption."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentlens.reviews import DIMENSIONS

COMPONENTS: tuple[str, ...] = ("Formal", *DIMENSIONS)


@dataclass
class QualityIndex:
    value: float
    components: dict[str, float | None]
    warnings: list[str] = field(default_factory=list)

    @property
    def reason(self) -> str:
        terms = " + ".join(f"{v if v is not None else 0:.4g}" for v in self.components.values())
        return f"100 × ({terms}) / 6 = {self.value:.2f}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "quality_index": round(self.value, 2),
            "components": self.components,
            "warnings": self.warnings,
            "reason": self.reason,
        }


def quality_index(formal: float | None, judge_means: Mapping[str, float | None]) -> QualityIndex:
    """Combine the formal pass rate and the judge means (each in [0, 1]) into the QI."""
    components: dict[str, float | None] = {"Formal": formal}
    components.update({d: judge_means.get(d) for d in DIMENSIONS})
    warnings = [f"{name} is missing and counts as 0" for name, v in components.items() if v is None]
    for name, value in components.items():
        if value is not None and not 0.0 <= value <= 1.0:
            warnings.append(f"{name} = {value} is outside [0, 1]; pass fractions, not percents")
    if formal is not None and formal < 0.3:
        warnings.append(f"formal pass rate {formal:.2f} < 0.3: possible repository corruption")
    total = sum(v for v in components.values() if v is not None)
    return QualityIndex(100.0 * total / 6, components, warnings)
