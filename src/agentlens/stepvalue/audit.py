"""Channel effect and the attribution audit (spec §9, decisions §13.6 and §13.8).

The channel effect of protocol p on transition t is `gap_t = G_p(t) − G_direct(t)`. The audit
sample is drawn twice: the spec's largest-gap selection (at most 3 per trajectory, largest |gap|
first, then random fill), which is biased towards extreme gaps by construction, and a uniform
random sample of the same size as the unbiased control. Each sample row says which one it is.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from scipy import stats

from agentlens.list_text import counted

NONZERO = 1e-9
EXCLUDED_FLAGS = {"used_floor_score", "rationale_leak", "missing_labels"}
FLOOR_OR_MISSING = {"used_floor_score", "missing_labels"}
Selection = Literal["largest-gap", "random"]
SELECTION_NOTE = {
    "largest-gap": "largest-gap (spec §9.1; biased towards extreme gaps)",
    "random": "random (unbiased control)",
}
CUE_FIELDS = [
    "gold_support_cue_in_state_before",
    "gold_support_cue_in_state_after",
    "gold_support_cue_in_rationale_before",
    "gold_support_cue_in_rationale_after",
    "competitor_support_cue_introduced",
    "unsupported_claim_in_rationale",
    "rationale_overstates_absence_of_evidence",
    "cue_retention_label",
    "attribution_label",
]


def paired(
    rows: Sequence[dict[str, Any]], channel: str, baseline: str = "direct"
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(channel row, baseline row) for each transition and slice scored under both."""

    def key(r: dict[str, Any]) -> tuple[str, str, str]:
        return (r["trajectory_id"], r["step_id"], r["slice"])

    base = {key(r): r for r in rows if r["channel"] == baseline}
    return [(r, base[key(r)]) for r in rows if r["channel"] == channel and key(r) in base]


def channel_effect(
    rows: Sequence[dict[str, Any]],
    channel: str,
    *,
    value: str = "g_margin",
    baseline: str = "direct",
    resamples: int = 10_000,
    seed: int = 7,
) -> dict[str, Any]:
    """§9.2 figures for one protocol against the baseline, with a clustered bootstrap CI and a
    Wilcoxon signed-rank test of the paired values."""
    pairs = paired(rows, channel, baseline)
    usable = [(a, b) for a, b in pairs if not a["missing"] and not b["missing"]]
    out: dict[str, Any] = {
        "channel": channel,
        "baseline": baseline,
        "value": value,
        "n": len(usable),
        # the protocol's own rows with a floored or missing label (§9.2), not its baseline's
        "floor_or_missing": sum(1 for a, _ in pairs if FLOOR_OR_MISSING & set(a["flags"])),
    }
    if not usable:
        return out
    x = np.array([a[value] for a, _ in usable])
    y = np.array([b[value] for _, b in usable])
    gaps = x - y
    both = (np.abs(x) > NONZERO) & (np.abs(y) > NONZERO)
    out |= {
        "mean_value": float(x.mean()),
        "mean_baseline": float(y.mean()),
        "mean_gap": float(gaps.mean()),
        "mean_abs_gap": float(np.abs(gaps).mean()),
        "sign_disagreement_rate": float((np.sign(x[both]) != np.sign(y[both])).mean())
        if both.any()
        else None,
        "damage_rate": statistics.fmean(float(a["damage"]) for a, _ in usable),
        "repair_rate": statistics.fmean(float(a["repair"]) for a, _ in usable),
        "protocol_damage_count": sum(1 for a, b in usable if a["damage"] and not b["damage"]),
        "protocol_repair_loss_count": sum(1 for a, b in usable if b["repair"] and not a["repair"]),
        **gap_ci(gaps, [a["trajectory_id"] for a, _ in usable], resamples, seed),
        "wilcoxon_p": _wilcoxon(gaps),
    }
    return out


MIN_CI_TRAJECTORIES = 4
"""With m trajectories a resample draws only the one with the lowest mean gap with probability
(1/m)^m, and as often only the highest: 25% for 2 and 3.7% for 3, above the 2.5% tail, so the
percentiles are those two trajectory means, the range of the data, not a 95% interval; for 4
it is 0.4%."""


def gap_ci(
    gaps: np.ndarray, clusters: Sequence[str], resamples: int = 10_000, seed: int = 7
) -> dict[str, Any]:
    """`mean_gap_ci95` as [low, high], or None with `mean_gap_ci95_na` saying why: a bootstrap
    over fewer than four trajectories only returns their extreme means, and a zero-width
    interval is no CI."""
    trajectories = len(set(clusters))
    if trajectories < MIN_CI_TRAJECTORIES:
        reason = (
            f"n/a: {counted(trajectories, 'trajectory')}; the CI resamples trajectories and needs "
            f"≥ {MIN_CI_TRAJECTORIES} (with fewer it is the lowest to the highest trajectory mean)"
        )
        return {"mean_gap_ci95": None, "mean_gap_ci95_na": reason}
    ci = cluster_bootstrap_ci(gaps, clusters, resamples, seed)
    if ci is None or ci[1] - ci[0] <= NONZERO:
        reason = f"n/a: every resample of the {trajectories} trajectories has the same mean gap"
        return {"mean_gap_ci95": None, "mean_gap_ci95_na": reason}
    return {"mean_gap_ci95": ci, "mean_gap_ci95_na": None}


def cluster_bootstrap_ci(
    values: np.ndarray, clusters: Sequence[str], resamples: int = 10_000, seed: int = 7
) -> list[float] | None:
    """95% CI of the mean, resampling whole trajectories (clusters) with replacement."""
    names = sorted(set(clusters))
    if len(values) < 2:
        return None
    index = {c: i for i, c in enumerate(names)}
    ids = np.array([index[c] for c in clusters])
    sums = np.bincount(ids, weights=values, minlength=len(names))
    counts = np.bincount(ids, minlength=len(names)).astype(float)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(names), size=(resamples, len(names)))
    means = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return [float(low), float(high)]


def _wilcoxon(gaps: np.ndarray) -> float | None:
    if np.count_nonzero(np.abs(gaps) > NONZERO) < 2:
        return None
    return float(stats.wilcoxon(gaps, zero_method="wilcox").pvalue)


def audit_sample(
    rows: Sequence[dict[str, Any]],
    channel: str,
    *,
    selection: Selection,
    n: int = 100,
    seed: int = 7,
    per_trajectory: int = 3,
    value: str = "g_margin",
    baseline: str = "direct",
) -> list[dict[str, Any]]:
    """Transitions for the human attribution audit, each labelled with how it was selected."""
    pairs = [
        (a, b)
        for a, b in paired(rows, channel, baseline)
        if not (EXCLUDED_FLAGS & {*a["flags"], *b["flags"]})
        and not a["missing"]
        and not b["missing"]
    ]
    rng = random.Random(seed)
    chosen = (
        _largest_gap(pairs, n, per_trajectory, rng, value)
        if selection == "largest-gap"
        else rng.sample(pairs, min(n, len(pairs)))
    )
    return [_audit_row(a, b, selection, value) for a, b in chosen]


def _largest_gap(
    pairs: list[tuple[dict[str, Any], dict[str, Any]]],
    n: int,
    per_trajectory: int,
    rng: random.Random,
    value: str,
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    ranked = sorted(pairs, key=lambda p: -abs(p[0][value] - p[1][value]))
    taken: dict[str, int] = {}
    Pair = tuple[dict[str, Any], dict[str, Any]]
    chosen: list[Pair] = []
    rest: list[Pair] = []
    for a, b in ranked:
        if len(chosen) < n and taken.get(a["trajectory_id"], 0) < per_trajectory:
            taken[a["trajectory_id"]] = taken.get(a["trajectory_id"], 0) + 1
            chosen.append((a, b))
        else:
            rest.append((a, b))
    return chosen + rng.sample(rest, min(n - len(chosen), len(rest)))


def _audit_row(
    a: dict[str, Any], b: dict[str, Any], selection: Selection, value: str
) -> dict[str, Any]:
    row = {
        "selection": SELECTION_NOTE[selection],
        "trajectory_id": a["trajectory_id"],
        "step_id": a["step_id"],
        "phase": a["phase"],
        "slice": a["slice"],
        # the states the labeller reads (text in states.jsonl, with each channel's rationale)
        "state_before": a.get("state_before"),
        "state_after": a.get("state_after"),
        "channel": a["channel"],
        "baseline": b["channel"],
        f"{value}_channel": a[value],
        f"{value}_baseline": b[value],
        "gap": a[value] - b[value],
    }
    return row | dict.fromkeys(CUE_FIELDS)
