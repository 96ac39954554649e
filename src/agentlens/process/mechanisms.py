"""Failure reasons, strengths (the release's report fields) and the Lucky-Pass mechanism tree.

Mechanisms (spec §11), applied to Lucky passes only, first match wins, thresholds from the profile:
C1 Minimal & Unverified (≤ `c1_max_states` states, zero waste, no V coverage; exact on the release),
C2 Brute-Force Convergence (total waste ≥ `c2_min_waste`), C4 Excessive Exploration (≥
`c4_min_states` states), C3 Incomplete Implementation (the run carries the release's
`incomplete_implementation` failure reason: a failing verdict, so that reasons are built, and I
coverage < `c3_impl_coverage_below`%), C5 Divergent-but-Valid (the rest). C2/C4 thresholds are
unpublished; defaults from spec §11.2.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agentlens.process.profiles import ProfileConfig
from agentlens.process.signals.workflow import StageCoverage
from agentlens.process.tiers import on_its_side

Mechanism = Literal["C1", "C2", "C3", "C4", "C5"]
NAMES = {
    "C1": "Minimal & Unverified",
    "C2": "Brute-Force Convergence",
    "C3": "Incomplete Implementation",
    "C4": "Excessive Exploration",
    "C5": "Divergent-but-Valid",
}
SEVERITY = {"critical": 0, "high": 1, "medium": 2, "low": 3}
STAGE_WORDS = (
    ("E", "exploration"),
    ("I", "implementation"),
    ("V", "verification"),
    ("O", "orchestration"),
)


@dataclass(frozen=True)
class FailureReason:
    reason: str
    detail: str
    severity: str


def failure_reasons(
    divergence_index: int | None,
    n_path: int,
    stages: StageCoverage,
    coherence: float,
    coverage: float,
) -> list[FailureReason]:
    out = []
    if divergence_index is not None and n_path > 0 and divergence_index / n_path < 0.4:
        p = divergence_index / n_path
        detail = f"Diverged at step {divergence_index + 1} of {n_path} ground-truth steps ({p:.0%} through)"
        out.append(FailureReason("early_divergence", detail, "critical"))
    v_total, v_pct = stages.total.get("V", 0), stages.percent("V")
    if v_total > 0 and v_pct < 25:
        detail = (
            f"Verification coverage is {v_pct:.0f}% ({stages.matched.get('V', 0)}/{v_total} steps). "
            "Agent may not have tested its changes."
        )
        out.append(FailureReason("missing_verification", detail, "high"))
    i_total, i_pct = stages.total.get("I", 0), stages.percent("I")
    if i_total > 0 and i_pct < 50:
        detail = f"Only {i_pct:.0f}% of implementation steps covered ({stages.matched.get('I', 0)}/{i_total})"
        out.append(
            FailureReason("incomplete_implementation", detail, "high" if i_pct < 25 else "medium")
        )
    if coherence < 0.35:
        detail = f"Coherence score is {coherence:.2f} — agent appears to backtrack heavily between stages"
        out.append(FailureReason("trajectory_thrashing", detail, "medium"))
    if coverage < 30 and not out:
        detail = (
            f"Only {coverage:.0f}% of ground-truth steps matched. Fundamentally different approach."
        )
        out.append(FailureReason("low_coverage", detail, "high"))
    return sorted(out, key=lambda r: SEVERITY.get(r.severity, 9))


def strengths(stages: StageCoverage, coherence: float, terminal_match: bool) -> list[str]:
    out = []
    for letter, word in STAGE_WORDS:
        if stages.total.get(letter, 0) > 0 and stages.percent(letter) >= 80:
            out.append(f"Strong {word} phase ({stages.percent(letter):.0f}% covered)")
    if coherence >= 0.7:
        out.append("Clean forward progression (high coherence)")
    if terminal_match:
        out.append("Reached correct terminal state")
    return out


def mechanism(
    config: ProfileConfig,
    *,
    n_states: int,
    total_waste: int,
    v_coverage: float,
    i_coverage: float,
    i_total: int,
    failing_verdict: bool = True,
) -> tuple[Mechanism, str]:
    """Classify one Lucky pass; returns (category, reason with the deciding numbers).
    `failing_verdict`: the run's verdict is FAIL / LIKELY FAIL / UNCERTAIN, the only verdicts for
    which the release builds failure reasons (spec §11.3), so C3 needs it (§11.1)."""
    if n_states <= config.c1_max_states and total_waste == 0 and v_coverage == 0:
        return "C1", f"{n_states} states ≤ {config.c1_max_states}, zero waste, V coverage 0 → C1"
    if total_waste >= config.c2_min_waste:
        return "C2", f"total waste {total_waste} ≥ {config.c2_min_waste} → C2"
    if n_states >= config.c4_min_states:
        return "C4", f"{n_states} states ≥ {config.c4_min_states} with waste {total_waste} → C4"
    below = config.c3_impl_coverage_below
    if i_total > 0 and i_coverage < below:
        shown = on_its_side(i_coverage, below, least=0)
        if failing_verdict:
            return "C3", f"I coverage {shown}% < {below:g}% with a failing verdict → C3"
        return "C5", f"I coverage {shown}% but a passing verdict (no failure reasons) → C5"
    return "C5", "none of C1-C4 applies → C5"
