"""The `calibrated` profile's composite (docs/validity.md): a logistic model of the ten process
signals in `FEATURES`, all of them, ridge-shrunk and fitted leave-task-out on ../shared/data by
`scripts/fit_profile.py` (choosing a few terms on 8 tasks was less stable than shrinking all).

score = 100·σ(b + Σ wᵢ·(xᵢ − μᵢ)/sᵢ), σ(z) = 1/(1 + e^−z): the run's estimated chance of passing
given its process alone (never its outcome). The signals (`FEATURES`), each in [0, 1] or a
log-ratio, named after what a reader can check in the run:

* `f1_rel`, `cov_rel`, `len_rel`: the run's set-F1 match, state coverage and length relative to the
  donors' own (each donor scored against the reference of the other donors, `DonorBaseline`): a
  task whose passing runs differ a lot from each other does not make every run look bad;
* `coh`, `temp`: the paper's coherence and temporal-profile signals;
* `weighted`: stage coverage of the best reference path, stage-weighted (I 3, V 2, E 1, O 0.5);
* `has_edit`: the run changed a file (an I step); `v_after`: a V step after its last change;
* `waste`: wasted steps / steps; `div`: the share of the best reference path the run followed
  before its first miss (1 = never diverged). Not the release's `divergence_fraction`, which
  divides by the run's own states, so that a short run that diverged reached 1 or more.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

from agentlens.process import calibrated_fit as fit
from agentlens.process.profiles import ProfileConfig
from agentlens.process.signals import Signal
from agentlens.process.tiers import on_its_side

if TYPE_CHECKING:
    from agentlens.process.pta import Reference
    from agentlens.process.result import ProcessResult

FEATURES = (
    "f1_rel",
    "cov_rel",
    "coh",
    "temp",
    "weighted",
    "v_after",
    "has_edit",
    "waste",
    "len_rel",
    "div",
)
BASELINE_KEY = "calibrated:donor_baseline"
BASELINE_DONORS = 5
"""Donors the baseline scores at most (the first ones, in merge order), each against the
reference of ALL the other donors (so the baseline matches the size of the reference the runs
are scored against): k = 5 as in the AgentLens-Bench protocol; a leave-one-out reference of 40
donors would otherwise cost 40 merges of 39 runs for every scored run."""


@dataclass(frozen=True)
class DonorBaseline:
    """Mean set-F1 (0-1), state coverage (0-1) and length of the donors, each scored against the
    reference merged from the other donors."""

    f1: float
    cov: float
    n_states: float
    reason: str


def saved_baseline(reference: Reference) -> dict[str, object] | None:
    """The baseline as saved in a reference file (`agentlens reference build`), if computed."""
    found = reference.cached(BASELINE_KEY, lambda: None)
    return asdict(found) if isinstance(found, DonorBaseline) else None


def reference_baseline(reference: Reference) -> DonorBaseline:
    """The reference's donor baseline, else (a reference read from a file keeps no donor runs) the
    mean baseline of the dev tasks the profile was fitted on."""
    found = reference.cached(BASELINE_KEY, lambda: None)
    if isinstance(found, DonorBaseline):
        return found
    return DonorBaseline(fit.BASELINE_F1, fit.BASELINE_COV, fit.BASELINE_N, fit.BASELINE_REASON)


def features(
    result: ProcessResult, stages: Sequence[str | None], baseline: DonorBaseline
) -> dict[str, Signal]:
    """Every candidate signal of a scored run (`stages`: its states' labels, in order)."""
    letters = [s for s in stages if s]
    last_edit = max((i for i, s in enumerate(letters) if s == "I"), default=-1)
    v_after = last_edit >= 0 and "V" in letters[last_edit + 1 :]
    f1, cov = result.f1_score / 100, result.signals["cov"].value / 100
    length = math.log((result.n_states + 1) / (baseline.n_states + 1))
    weighted = result.stages.weighted_signal()
    values = {
        "f1_rel": (f1 - baseline.f1, _f1_reason(result, f1, baseline)),
        "cov_rel": (
            cov - baseline.cov,
            f"coverage {cov:.3f} − donors' {baseline.cov:.3f} = {cov - baseline.cov:.4f}",
        ),
        "coh": (result.signals["coh"].value, result.signals["coh"].reason),
        "temp": (result.signals["temp"].value, result.signals["temp"].reason),
        "weighted": (weighted.value, weighted.reason),
        "v_after": (
            float(v_after),
            "a V step after the last I step = 1" if v_after else "no V step after an I step = 0",
        ),
        "has_edit": (float(last_edit >= 0), "an I step = 1" if last_edit >= 0 else "no I step = 0"),
        "waste": (
            result.waste_severity,
            f"{result.total_wasted_steps} wasted / {result.n_states} = {result.waste_severity:.4f}",
        ),
        "len_rel": (
            length,
            f"ln(({result.n_states}+1)/({baseline.n_states:.1f}+1)) = {length:.4f}",
        ),
        "div": _followed(result),
    }
    return {name: Signal(name, value, reason) for name, (value, reason) in values.items()}


def _f1_reason(result: ProcessResult, f1: float, baseline: DonorBaseline) -> str:
    """The release's set-F1 (`f1_score`), which is not struct's ordered F1 under paper's signals."""
    recall, precision = result.coverage_percent / 100, result.precision_percent / 100
    return (
        f"set-F1 2·{recall:.3f}·{precision:.3f}/({recall:.3f} + {precision:.3f}) = {f1:.3f} "
        "(best-path recall and precision, greedy set matching: the release's f1_score, not "
        f"struct's ordered F1); donors' {baseline.f1:.3f} ({baseline.reason}); "
        f"{f1:.3f} − {baseline.f1:.3f} = {f1 - baseline.f1:.4f}"
    )


def _followed(result: ProcessResult) -> tuple[float, str]:
    """The share of the best path followed before the first missed state: 1 when none missed."""
    found = result.divergence
    if found.index is None or not found.path_length:
        return 1.0, found.reason or "every best-path state was matched"
    share = found.index / found.path_length
    return (
        share,
        f"{found.index} of {found.path_length} path states before the first miss = {share:.3f}: {found.reason}",
    )


NO_PROCESS = Signal(
    "composite", 0.0, "no steps: a run without a process scores 0 (the model knows runs only)"
)


def calibrated_composite(
    config: ProfileConfig, signals: dict[str, Signal], n_states: int
) -> Signal:
    """The logistic composite; a run of no steps gets the floor instead, since the model would
    extrapolate (it reads as fully coherent, never diverging and wasting nothing: 53.9 for a real
    empty Codex session, above many passing runs)."""
    return logistic(config, signals) if n_states else NO_PROCESS


def logistic(config: ProfileConfig, signals: dict[str, Signal]) -> Signal:
    """100·σ(b + Σ w·(x − μ)/s), each term shown with its arithmetic."""
    z = config.intercept
    shown = []
    for term in config.terms:
        x = signals[term.signal].value
        part = term.weight * (x - term.mean) / term.sd
        z += part
        # the constants as fitted (4 decimals): rounder, a hand recomputation was 0.5 points off
        shown.append(f"{term.weight:+.4f}·({term.signal} {x:.4f} − {term.mean:.4f})/{term.sd:.4f}")
    value = 100.0 / (1.0 + math.exp(-z))
    terms = " ".join(shown)
    # 71.7996 to 2 decimals reads 71.80, beside a tier reason that says 71.7996 < 71.8
    thresholds = (config.ideal_min, config.lucky_below, config.partial_fail_min)
    shown_value = on_its_side(value, *thresholds, least=2)
    return Signal(
        "composite", value, f"100·σ({config.intercept:+.4f} {terms} = {z:.3f}) = {shown_value}"
    )


def drivers(
    config: ProfileConfig, signals: dict[str, Signal], top: int = 3
) -> list[tuple[str, float]]:
    """The `top` terms that moved this run's logit most from the dev runs' average, each with
    its part of the sum (weight·(x − mean)/sd), largest first; none without a logistic
    composite or without the signals it needs (a run of no steps)."""
    if config.composite != "logistic" or any(t.signal not in signals for t in config.terms):
        return []
    parts = [(t.signal, t.weight * (signals[t.signal].value - t.mean) / t.sd) for t in config.terms]
    return sorted(parts, key=lambda part: -abs(part[1]))[:top]


def with_features(result: ProcessResult, extra: dict[str, Signal]) -> ProcessResult:
    return replace(result, signals=result.signals | extra)
