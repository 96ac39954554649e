"""Per-transition metrics (spec §6) from the belief before (b⁻) and after (b⁺) a step.

Edge cases: identical before/after beliefs give ΔH = 0, S = 0 and zero gold gains. Entropy is in
nats over b(c) > 0. Surprise smooths both beliefs, p̃ = (1 − ε)·p/Σp + ε/K. The margin is read on
the raw scores s, not on beliefs; "correct" means margin > 0 (lse by default).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np

from agentlens.providers.types import logsumexp
from agentlens.stepvalue.belief import Belief, softmax

EPSILON = 1e-6
GOLD_FLOOR = 1e-12
MarginMode = Literal["lse", "max"]


def entropy(probs: Sequence[float]) -> float:
    return -sum(p * math.log(p) for p in probs if p > 0)


def smooth(probs: Sequence[float], epsilon: float = EPSILON) -> np.ndarray:
    arr = np.asarray(probs, dtype=float)
    return (1 - epsilon) * arr / arr.sum() + epsilon / len(arr)


def kl(p: Sequence[float], q: Sequence[float], epsilon: float = EPSILON) -> float:
    """KL(p ‖ q) in nats on ε-smoothed distributions."""
    ps, qs = smooth(p, epsilon), smooth(q, epsilon)
    return float(np.sum(ps * np.log(ps / qs)))


def js(p: Sequence[float], q: Sequence[float], epsilon: float = EPSILON) -> float:
    ps, qs = smooth(p, epsilon), smooth(q, epsilon)
    m = (ps + qs) / 2
    return float(0.5 * np.sum(ps * np.log(ps / m)) + 0.5 * np.sum(qs * np.log(qs / m)))


def margin(belief: Belief, gold: str, mode: MarginMode = "lse") -> float:
    """s(g) minus logsumexp (lse) or max (max) of the other candidates' raw scores."""
    others = [s for c, s in zip(belief.candidate_ids, belief.scores, strict=True) if c != gold]
    competitor = logsumexp(others) if mode == "lse" else max(others)
    return belief.score_of(gold) - competitor


def gold_rank(belief: Belief, gold: str) -> int:
    """1 = the gold has the highest belief; ties count against the gold."""
    p_gold = belief.probs[belief.candidate_ids.index(gold)]
    return 1 + sum(
        1
        for c, p in zip(belief.candidate_ids, belief.probs, strict=True)
        if c != gold and p >= p_gold
    )


def argmax(belief: Belief) -> str:
    return belief.candidate_ids[int(np.argmax(belief.probs))]


@dataclass(frozen=True)
class TransitionMetrics:
    delta_h: float
    delta_h_normalised: float
    entropy_before: float
    entropy_after: float
    surprise: float
    pivot_js: float
    margin_before: float
    margin_after: float
    g_margin: float
    g_margin_max: float
    gold_ll_gain: float
    oracle_gold_ll_gain: float
    gold_rank_before: int
    gold_rank_after: int
    damage: bool
    repair: bool
    pivot: bool
    pivot_to_gold: bool
    pivot_from_gold: bool
    reason: str

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def transition_metrics(
    before: Belief, after: Belief, gold: str, *, epsilon: float = EPSILON
) -> TransitionMetrics:
    """All §6 metrics for one transition; `reason` shows the arithmetic of the headline values."""
    h0, h1 = entropy(before.probs), entropy(after.probs)
    m0, m1 = margin(before, gold), margin(after, gold)
    mx0, mx1 = margin(before, gold, "max"), margin(after, gold, "max")
    g_index = before.candidate_ids.index(gold)
    p0, p1 = before.probs[g_index], after.probs[g_index]
    top0, top1 = argmax(before), argmax(after)
    surprise = kl(after.probs, before.probs, epsilon)
    reason = (
        f"ΔH = {h0:.4f} − {h1:.4f} = {h0 - h1:.4f} nats; S = KL(after‖before) = {surprise:.4f}; "
        f"G_margin(lse) = {m1:.4f} − {m0:.4f} = {m1 - m0:.4f}; b(gold) {p0:.4f} → {p1:.4f}"
    )
    return TransitionMetrics(
        delta_h=h0 - h1,
        delta_h_normalised=(h0 - h1) / math.log(len(before.probs)),
        entropy_before=h0,
        entropy_after=h1,
        surprise=surprise,
        pivot_js=js(after.probs, before.probs, epsilon),
        margin_before=m0,
        margin_after=m1,
        g_margin=m1 - m0,
        g_margin_max=mx1 - mx0,
        gold_ll_gain=_log(p1) - _log(p0),
        oracle_gold_ll_gain=math.log(max(p1, GOLD_FLOOR)) - math.log(max(p0, GOLD_FLOOR)),
        gold_rank_before=gold_rank(before, gold),
        gold_rank_after=gold_rank(after, gold),
        damage=m0 > 0 >= m1,
        repair=m0 <= 0 < m1,
        pivot=top0 != top1,
        pivot_to_gold=top0 != top1 and top1 == gold,
        pivot_from_gold=top0 != top1 and top0 == gold,
        reason=reason,
    )


def _log(p: float) -> float:
    return math.log(p) if p > 0 else -math.inf


def temperature_entropy(belief: Belief, tau: float) -> float:
    """Entropy of softmax(s / τ), for the §6.6 saturation table."""
    return entropy(softmax(belief.scores, tau))
