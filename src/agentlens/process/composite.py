"""Composite scores (spec §8).

* `eq1` (paper, Eq. 1): f = w_struct·Φ_struct + w_cov·Φ_cov + w_coh·100·Φ_coh + w_temp·100·Φ_temp
  (weights 0.20/0.15/0.30/0.35), 0-100, never using the pass/fail label.
* `sdk` (the released `quality_score`): round(0.25·cov% + 0.25·100·coh + 0.18·100·stage
  completeness + 0.12·100·workflow + 0.10·F1% + 0.10·outcome), outcome 100/0/50 for pass/fail/
  unknown (switchable), banker's rounding, clamped to [0, 100].
"""

from __future__ import annotations

from agentlens.process.profiles import ProfileConfig
from agentlens.process.signals import Signal
from agentlens.process.tiers import shown_score
from agentlens.trajectory import OutcomeStatus

OUTCOME_POINTS = {"passed": 100.0, "failed": 0.0, "unknown": 50.0}


def outcome_term(config: ProfileConfig, outcome: OutcomeStatus) -> float:
    """What the outcome adds to the composite: the release's +10 for a pass in `sdk-compat`."""
    if config.composite != "sdk" or not config.include_outcome:
        return 0.0
    return config.sdk_w_outcome * OUTCOME_POINTS[outcome]


def eq1(config: ProfileConfig, struct: float, cov: float, coh: float, temp: float) -> Signal:
    terms = [
        (config.w_struct, struct, "Φ_struct"),
        (config.w_cov, cov, "Φ_cov"),
        (config.w_coh, 100 * coh, "100·Φ_coh"),
        (config.w_temp, 100 * temp, "100·Φ_temp"),
    ]
    value = sum(w * x for w, x, _ in terms)
    shown = " + ".join(f"{w:.2f}·{x:.1f}[{name}]" for w, x, name in terms)
    # to one decimal 69.99 reads 70.0, beside a tier reason that says 69.99 < 70
    return Signal("composite", value, f"Eq. 1: {shown} = {shown_score(value, config)}")


def sdk_score(
    config: ProfileConfig,
    *,
    cov: float,
    coh: float,
    stage_completeness: float,
    workflow: float,
    f1: float,
    outcome: OutcomeStatus,
) -> Signal:
    terms = [
        (config.sdk_w_cov, cov, "cov%"),
        (config.sdk_w_coh, 100 * coh, "coh"),
        (config.sdk_w_stage, 100 * stage_completeness, "stages"),
        (config.sdk_w_workflow, 100 * workflow, "workflow"),
        (config.sdk_w_f1, f1, "F1%"),
    ]
    if config.include_outcome:
        terms.append((config.sdk_w_outcome, OUTCOME_POINTS[outcome], f"outcome[{outcome}]"))
    raw = sum(w * x for w, x, _ in terms)
    value = float(max(0, min(100, round(raw))))
    shown = " + ".join(f"{w:.2f}·{x:.1f}[{n}]" for w, x, n in terms)
    clamped = ", clamped to 0-100" if value != round(raw) else ""
    return Signal(
        "composite",
        value,
        f"released score: round({shown} = {_deciding(raw)}){clamped} = {value:.0f}",
    )


def _deciding(raw: float) -> str:
    """`raw` to 2 decimals, or to as many more as it takes for the printed sum to round as `raw`
    does (53.4961 is 53.50 to 2 decimals, which a reader rounds up; the score is 53); an exact
    half says which way it went (Python's round, as the release: half to even). A sum a float's
    error puts next to a half (47.49999999999999) is printed whole, as `repr` gives it."""
    for digits in range(2, 7):
        shown = f"{raw:.{digits}f}"
        if float(shown) == raw or abs(float(shown) - round(raw)) != 0.5:
            break
    else:
        shown = repr(raw)
    if abs(raw - round(raw)) == 0.5:
        return f"{shown}, half to even"
    return shown
