"""Tiers (spec §9), the release's five-level verdict (§9.4) and its verdict-based tier (§9.3).

Passing runs: Ideal ≥ `ideal_min`, Lucky < `lucky_below`, else Solid. Failing runs: Partial-fail ≥
`partial_fail_min` (40 in `sdk-compat`, as the released data; 47 in `paper`, as printed), else
Off-track. Unknown outcomes get no tier.

Under `calibrated` the thresholds have a stated meaning (`MEANING`, docs/validity.md), the same
for every task: the boundary (`lucky_below` = `partial_fail_min`) is the process score that best
separated passing from failing runs leave-task-out on the dev tasks (max balanced accuracy), and
at most 5 % of the failing dev runs reached `ideal_min`.
"""

from __future__ import annotations

from typing import Literal

from agentlens.process.profiles import CALIBRATED, ProfileConfig
from agentlens.trajectory import OutcomeStatus

Tier = Literal["ideal", "solid", "lucky", "partial_fail", "off_track"]


MEANING: dict[str, str] = {
    "ideal": "a pass whose process few failing runs reach (≤ 5 % of failing dev runs score this high)",
    "solid": "a pass whose process looks like a pass (at or above the boundary)",
    "lucky": "a pass whose process looks like a failure (below the boundary)",
    "partial_fail": "a failure whose process looks like a pass (at or above the boundary)",
    "off_track": "a failure whose process looks like a failure (below the boundary)",
}
TIER_HELP = (
    f"Tiers (calibrated; the same thresholds for every task): the boundary {CALIBRATED.lucky_below:g} is the process "
    "score that best separated passing from failing dev runs leave-task-out (max balanced "
    "accuracy). Lucky = a pass below it (its process looks like a failure); Partial-fail = a "
    f"failure at or above it; Solid = a pass at or above it; Ideal = a pass scoring ≥ {CALIBRATED.ideal_min:g}, "
    "which at most 5 % of failing dev runs reach; Off-track = a failure below the boundary. "
    "See docs/validity.md."
)


def tier(score: float, outcome: OutcomeStatus, config: ProfileConfig) -> tuple[Tier | None, str]:
    """(tier, reason); under `calibrated` the reason ends with the tier's meaning."""
    found, reason = _tier(score, outcome, config)
    if found is not None and config.composite == "logistic":
        reason = f"{reason}: {MEANING[found]}"
    return found, reason


def _tier(score: float, outcome: OutcomeStatus, config: ProfileConfig) -> tuple[Tier | None, str]:
    ideal, lucky, partial = config.ideal_min, config.lucky_below, config.partial_fail_min
    if outcome == "passed":
        if score >= ideal:
            return "ideal", f"passed and {on_its_side(score, ideal)} ≥ {ideal:g} → ideal"
        if score < lucky:
            return "lucky", f"passed and {on_its_side(score, lucky)} < {lucky:g} → lucky"
        shown = on_its_side(score, lucky, ideal)
        return "solid", f"passed and {lucky:g} ≤ {shown} < {ideal:g} → solid"
    if outcome == "failed":
        if score >= partial:
            return (
                "partial_fail",
                f"failed and {on_its_side(score, partial)} ≥ {partial:g} → partial_fail",
            )
        return "off_track", f"failed and {on_its_side(score, partial)} < {partial:g} → off_track"
    return None, "outcome unknown → no tier"


def shown_score(score: float, config: ProfileConfig) -> str:
    """The score as a table prints it: on the side of every tier threshold it is on."""
    return on_its_side(score, config.ideal_min, config.lucky_below, config.partial_fail_min)


def on_its_side(score: float, *thresholds: float, least: int = 1) -> str:
    """The score to `least` decimals, or to as many as it takes to stay on its side of each
    threshold (69.99 < 70, not 70.0 < 70)."""
    for digits in range(least, 6):
        text = f"{score:.{digits}f}"
        if all((float(text) < t) == (score < t) for t in thresholds):
            return text
    return repr(score)


def verdict(weighted: float, completeness: float, bottleneck: float, terminal: bool) -> str:
    """The release's PASS / LIKELY PASS / UNCERTAIN / LIKELY FAIL / FAIL from stage coverage."""
    if bottleneck == 0.0 and completeness < 1.0:
        if weighted >= 60:
            return "LIKELY PASS" if terminal else "UNCERTAIN"
        return "LIKELY FAIL" if weighted >= 40 else "FAIL"
    if weighted >= 75 and completeness >= 0.75:
        return "PASS"
    if weighted >= 60 and completeness >= 0.5:
        return "LIKELY PASS" if terminal else "UNCERTAIN"
    if weighted < 30 or completeness < 0.25:
        return "FAIL"
    return "LIKELY FAIL" if weighted < 50 else "UNCERTAIN"


def verdict_tier(the_verdict: str, coverage: float, coherence: float, completeness: float) -> Tier:
    """The release's *other* tier (`quality_assessment().quality_tier`, stored in its analysis
    reports), from the verdict rather than the score; it disagrees with the score tier on most
    released rows (spec §9.3)."""
    if the_verdict in ("PASS", "LIKELY PASS"):
        if coverage >= 70 and coherence >= 0.6 and completeness >= 0.75:
            return "ideal"
        if coverage >= 50 and coherence >= 0.4 and completeness >= 0.5:
            return "solid"
        return "lucky"
    return "partial_fail" if coverage >= 40 and completeness >= 0.5 else "off_track"
