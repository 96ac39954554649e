"""The deterministic Pitfalls SxS score from burden totals (spec §6).

BurdenTotal = Σ severity_points × (2 if repeated else 1), with low = 1, medium = 3, high = 7.
Delta = Total_2 − Total_1; the magnitude comes from |Delta| (≤3 → 0, 4–6 → 1, 7–10 → 2,
11–15 → 3, 16–22 → 4, ≥23 → 5); Score = −sign(Delta) × magnitude, so a negative score means
Agent 1 (lower burden) is better."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

SEVERITY_POINTS = {"low": 1, "medium": 3, "high": 7}
# Upper |Delta| bound (inclusive) for magnitudes 0..4; anything above is 5.
MAGNITUDE_BOUNDS = (3, 6, 10, 15, 22)


@dataclass(frozen=True)
class PitfallScore:
    total_1: int
    total_2: int
    delta: int
    score: int

    @property
    def line(self) -> str:
        """The line the judge is asked to print, for cross-checking its arithmetic."""
        return f"Totals: A1={self.total_1}, A2={self.total_2}, Delta={self.delta} => Score={self.score}"


def burden_total(pitfalls: Iterable[tuple[str, bool]]) -> int:
    """Sum of severity points, doubled for repeated pitfalls; `pitfalls` = (severity, repeated)."""
    return sum(SEVERITY_POINTS[sev.lower()] * (2 if repeated else 1) for sev, repeated in pitfalls)


def magnitude(delta: int) -> int:
    return next((m for m, bound in enumerate(MAGNITUDE_BOUNDS) if abs(delta) <= bound), 5)


def pitfalls_score(total_1: int, total_2: int) -> PitfallScore:
    delta = total_2 - total_1
    sign = (delta > 0) - (delta < 0)
    return PitfallScore(total_1, total_2, delta, -sign * magnitude(delta))
