"""Φ_temp, temporal stage profile, paper Eq. (3) (spec §7.5).

Labelled stages are cut into three segments of `n // 3` states (at least 1; the last absorbs the
remainder, so short runs have empty segments). Each segment's E/I/V/O distribution is Laplace
smoothed (α = 0.01; an empty segment is uniform) and compared with the reference path's by the
Jensen-Shannon divergence in log2. Φ_temp = max(0, 1 − mean JSD); 0 when either side has no labels.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from agentlens.process.signals import Signal

STAGES = ("E", "I", "V", "O")


def segments(stages: Sequence[str], n: int = 3) -> list[list[str]]:
    labelled = [s for s in stages if s]
    if not labelled:
        return [[] for _ in range(n)]
    size = max(1, len(labelled) // n)
    return [labelled[k * size : (k + 1) * size if k < n - 1 else len(labelled)] for k in range(n)]


def distribution(stages: Sequence[str], alpha: float = 0.01) -> list[float]:
    stages = list(stages)
    counts = [alpha + stages.count(st) for st in STAGES]
    total = sum(counts)
    return [c / total for c in counts]


def jsd(p: Sequence[float], q: Sequence[float]) -> float:
    m = [(a + b) / 2 for a, b in zip(p, q, strict=True)]

    def kl(x: Sequence[float]) -> float:
        return sum(a * math.log2(a / b) for a, b in zip(x, m, strict=True) if a > 0 and b > 0)

    return 0.5 * kl(p) + 0.5 * kl(q)


def temporal(
    cand: Sequence[str], reference: Sequence[str], n: int = 3, alpha: float = 0.01
) -> Signal:
    cs, rs = segments(cand, n), segments(reference, n)
    if not any(cs) or not any(rs):
        return Signal("temp", 0.0, "no labelled states on one side → 0")
    parts = [
        jsd(distribution(a, alpha), distribution(b, alpha)) for a, b in zip(cs, rs, strict=False)
    ]
    value = max(0.0, 1.0 - sum(parts) / n)
    shown = " + ".join(f"{x:.3f}" for x in parts)
    sizes = "/".join(str(len(s)) for s in cs)
    reason = f"segments {sizes} vs reference; 1 − ({shown}) / {n} = {value:.3f}"
    return Signal("temp", value, reason)
