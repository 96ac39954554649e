"""Saturation and smoothing sensitivity (spec §6.6): entropy of softmax(s/τ) for τ ∈ {1, 2, 5, 10}
and surprise for ε ∈ {1e-4, 1e-6, 1e-8}, per channel and slice, on the identity-labelling beliefs.

Scores are recovered as log b (softmax is shift-invariant, so softmax(log b / τ) = softmax(s / τ)).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from agentlens.stepvalue.belief import softmax
from agentlens.stepvalue.metrics import entropy, kl

TAUS = (1.0, 2.0, 5.0, 10.0)
EPSILONS = (1e-4, 1e-6, 1e-8)
TINY = 1e-300


def _tempered_entropy(belief: dict[str, float], tau: float) -> float:
    logs = [math.log(max(p, TINY)) for p in belief.values()]
    return entropy(softmax(logs, tau))


def sensitivity(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (channel, slice): mean ΔH at each τ and mean S at each ε."""
    keys = sorted({(r["channel"], r["slice"]) for r in rows if not r["missing"]})
    out = []
    for channel, which in keys:
        items = [
            r for r in rows if (r["channel"], r["slice"]) == (channel, which) and not r["missing"]
        ]
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
