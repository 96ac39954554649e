"""Saturation and smoothing sensitivity (spec §6.6): entropy of softmax(s/τ) for τ ∈ {1, 2, 5, 10},
surprise for ε ∈ {1e-4, 1e-6, 1e-8}, and the headline values for floor ∈ {−10, −20, −30}, per
channel and slice, on the identity-labelling beliefs.

Scores are recovered as log b (softmax is shift-invariant, so softmax(log b / τ) = softmax(s / τ)).
The floor table re-derives s(c) from the stored raw label log-probs (`raw_scores_*`), without
calling the model again; with exact logits the floor never applies, and the table says so.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from agentlens.stepvalue.belief import Belief, belief_from_raw, softmax
from agentlens.stepvalue.metrics import entropy, kl, transition_metrics

TAUS = (1.0, 2.0, 5.0, 10.0)
EPSILONS = (1e-4, 1e-6, 1e-8)
FLOORS = (-10.0, -20.0, -30.0)
TINY = 1e-300
EXACT_NOTE = "exact logits: the floor never applies, so every floor gives the same values"
PROVIDED_NOTE = "provided beliefs: no top-k read-out to re-floor"


def _tempered_entropy(belief: dict[str, float], tau: float) -> float:
    logs = [math.log(max(p, TINY)) for p in belief.values()]
    return entropy(softmax(logs, tau))


def sensitivity(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (channel, slice): mean ΔH at each τ and mean S at each ε."""
    out = []
    for (channel, which), items in _groups(rows).items():
        row: dict[str, Any] = {"channel": channel, "slice": which, "n": len(items)}
        for tau in TAUS:
            row[f"mean_delta_h_tau{tau:g}"] = statistics.fmean(
                _tempered_entropy(r["belief_before"], tau)
                - _tempered_entropy(r["belief_after"], tau)
                for r in items
            )
        for eps in EPSILONS:
            row[f"mean_surprise_eps{eps:g}"] = statistics.fmean(
                kl(_aligned(r["belief_after"], r), _aligned(r["belief_before"], r), eps)
                for r in items
            )
        out.append(row)
    return out


def _aligned(belief: dict[str, float], row: dict[str, Any]) -> list[float]:
    return [belief[c] for c in sorted(row["belief_before"])]


def floor_sensitivity(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (channel, slice): mean G (lse), ΔH, S and the share of transitions with a floored
    label at each floor; transitions read from exact logits are counted, not recomputed."""
    out = []
    for (channel, which), items in _groups(rows).items():
        top_k = [r for r in items if not r["exact_logits"] and not r.get("provided")]
        row: dict[str, Any] = {"channel": channel, "slice": which, "n": len(items)}
        row["n_top_k"] = len(top_k)
        if not top_k:
            provided = any(r.get("provided") for r in items)
            out.append(row | {"note": PROVIDED_NOTE if provided else EXACT_NOTE})
            continue
        for floor in FLOORS:
            metrics, floored = [], 0
            for r in top_k:
                b0, b1 = _refloored(r, "before", floor), _refloored(r, "after", floor)
                metrics.append(transition_metrics(b0, b1, r["gold_id"]))
                floored += _at_floor(r, floor)
            tag = f"floor{floor:g}"
            row[f"mean_g_margin_{tag}"] = statistics.fmean(m.g_margin for m in metrics)
            row[f"mean_delta_h_{tag}"] = statistics.fmean(m.delta_h for m in metrics)
            row[f"mean_surprise_{tag}"] = statistics.fmean(m.surprise for m in metrics)
            row[f"floor_rate_{tag}"] = floored / len(top_k)
        out.append(row)
    return out


def _groups(rows: Sequence[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        if not r["missing"]:
            groups.setdefault((r["channel"], r["slice"]), []).append(r)
    return dict(sorted(groups.items()))


def _at_floor(row: dict[str, Any], floor: float) -> bool:
    """A label of the transition scored at the floor: absent from the list, or listed below it."""
    return any(
        not values or max(values) < floor
        for side in ("before", "after")
        for values in row[f"raw_scores_{side}"].values()
    )


def _refloored(row: dict[str, Any], side: str, floor: float) -> Belief:
    raw = row[f"raw_scores_{side}"]
    return belief_from_raw(raw, dict.fromkeys(raw, False), floor)
