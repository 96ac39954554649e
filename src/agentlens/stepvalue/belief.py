"""Belief formation (spec §5): label log-probs -> raw per-candidate scores s(c) -> belief b(c).

Top-k: `s(c) = logsumexp of max(logprob, floor)` over the listed tokens that spell label(c) (" A",
"A", "A." …: `labels.py` folds the spellings onto the label); a label with no listed token gets the
floor. Exact logits (§5.2): `s(c)` is the
exact log-prob, never floored; only a label no vocabulary token spells gets the floor. `b =
softmax(s)` over the candidates only: a renormalisation over the label tokens, ignoring
vocabulary mass elsewhere.

Each belief keeps the label read-out before the floor (`raw`: per candidate the log-prob of every
top-k token spelling its label, e.g. "A" and " A"; None when none was listed), so s(c) =
logsumexp over variants of max(logprob, floor) exactly as in §5.1, and the floor-sensitivity table
(§6.6) re-derives s(c) at another floor without calling the model again.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from agentlens.providers.types import logsumexp

FLOOR = -20.0


@dataclass(frozen=True)
class Belief:
    """Scores and belief over candidate ids (not labels), with how each score was read."""

    candidate_ids: tuple[str, ...]
    scores: tuple[float, ...]
    probs: tuple[float, ...]
    sources: tuple[str, ...]
    raw: tuple[tuple[float, ...] | None, ...]

    @property
    def used_floor(self) -> bool:
        return "floor" in self.sources

    def as_dict(self) -> dict[str, float]:
        return dict(zip(self.candidate_ids, self.probs, strict=True))

    def score_of(self, candidate_id: str) -> float:
        return self.scores[self.candidate_ids.index(candidate_id)]

    def raw_dict(self) -> dict[str, list[float] | None]:
        return {
            c: None if r is None else list(r)
            for c, r in zip(self.candidate_ids, self.raw, strict=True)
        }

    @property
    def exact(self) -> bool:
        return "exact" in self.sources


def softmax(scores: Sequence[float], temperature: float = 1.0) -> list[float]:
    arr = np.asarray(scores, dtype=float) / temperature
    arr = np.exp(arr - arr.max())
    return [float(x) for x in arr / arr.sum()]


def belief_from_labels(
    label_logprobs: Mapping[str, float],
    label_sources: Mapping[str, str],
    mapping: Mapping[str, str],
    *,
    floor: float = FLOOR,
    label_variants: Mapping[str, Sequence[float]] | None = None,
) -> Belief:
    """Belief over candidates from per-label log-probs and a label -> candidate id mapping.

    `label_variants` gives each top-k label's unmerged token log-probs; without it the merged
    value stands for the single variant."""
    raw: dict[str, Sequence[float] | None] = {}
    exact: dict[str, bool] = {}
    for label, candidate_id in mapping.items():
        value, source = label_logprobs.get(label), label_sources.get(label, "floor")
        variants = (label_variants or {}).get(label)
        if value is None or source == "floor":
            raw[candidate_id] = None
        else:
            raw[candidate_id] = [float(v) for v in variants] if variants else [float(value)]
        exact[candidate_id] = source == "exact"
    return belief_from_raw(raw, exact, floor)


def belief_from_raw(
    raw: Mapping[str, Sequence[float] | None], exact: Mapping[str, bool], floor: float = FLOOR
) -> Belief:
    """Belief from per-candidate raw variant log-probs (None = absent from the top-k list):
    exact values as they are, top-k ones as logsumexp of max(variant, floor)."""
    ids = sorted(raw)
    scores, sources = [], []
    for candidate_id in ids:
        values = raw[candidate_id]
        if not values:
            scores.append(floor)
            sources.append("floor")
        elif exact[candidate_id]:
            scores.append(logsumexp(values))
            sources.append("exact")
        else:  # listed: clamped to the floor if below it, but not "floored" (§5.1 step 5)
            scores.append(logsumexp(max(v, floor) for v in values))
            sources.append("top_k")
    return Belief(
        candidate_ids=tuple(ids),
        scores=tuple(scores),
        probs=tuple(softmax(scores)),
        sources=tuple(sources),
        raw=tuple(tuple(v) if (v := raw[c]) else None for c in ids),
    )


def refloor(belief: Belief, floor: float) -> Belief:
    """The same label read-out at another floor (exact scores are unchanged)."""
    exact = {c: s == "exact" for c, s in zip(belief.candidate_ids, belief.sources, strict=True)}
    return belief_from_raw(belief.raw_dict(), exact, floor)


def belief_from_probs(candidate_ids: Sequence[str], probs: Sequence[float]) -> Belief:
    """A belief given directly as probabilities (scores = log p), e.g. an averaged belief."""
    total = float(sum(probs))
    norm = [float(p) / total for p in probs]
    scores = [math.log(p) if p > 0 else -math.inf for p in norm]
    return Belief(
        tuple(candidate_ids),
        tuple(scores),
        tuple(norm),
        ("derived",) * len(norm),
        tuple((s,) for s in scores),
    )
