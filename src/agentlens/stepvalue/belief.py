"""Belief formation (spec §5): label log-probs -> raw per-candidate scores s(c) -> belief b(c).

Top-k: `s(c) = max(logprob(label(c)), floor)`; the provider has already merged label variants such
as "A" / " A" (logsumexp) and given an absent label the floor. Exact logits (§5.2): `s(c)` is the
exact log-prob, never floored; only a label no vocabulary token spells gets the floor. `b =
softmax(s)` over the candidates only: a renormalisation over the label tokens, ignoring
vocabulary mass elsewhere.

Each belief keeps the provider's value before the floor (`raw`, None when the label was absent
from the top-k list), so the floor-sensitivity table (§6.6) re-derives s(c) at another floor
without calling the model again. The clamp is applied to the merged variant value, not to each
variant before merging as in the authors' code; the two differ only when a label's variants all
fall below the floor.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

FLOOR = -20.0


@dataclass(frozen=True)
class Belief:
    """Scores and belief over candidate ids (not labels), with how each score was read."""

    candidate_ids: tuple[str, ...]
    scores: tuple[float, ...]
    probs: tuple[float, ...]
    sources: tuple[str, ...]
    raw: tuple[float | None, ...]

    @property
    def used_floor(self) -> bool:
        return "floor" in self.sources

    def as_dict(self) -> dict[str, float]:
        return dict(zip(self.candidate_ids, self.probs, strict=True))

    def score_of(self, candidate_id: str) -> float:
        return self.scores[self.candidate_ids.index(candidate_id)]

    def raw_dict(self) -> dict[str, float | None]:
        return dict(zip(self.candidate_ids, self.raw, strict=True))

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
) -> Belief:
    """Belief over candidates from per-label log-probs and a label -> candidate id mapping."""
    raw: dict[str, float | None] = {}
    exact: dict[str, bool] = {}
    for label, candidate_id in mapping.items():
        value, source = label_logprobs.get(label), label_sources.get(label, "floor")
        raw[candidate_id] = None if value is None or source == "floor" else float(value)
        exact[candidate_id] = source == "exact"
    return belief_from_raw(raw, exact, floor)


def belief_from_raw(
    raw: Mapping[str, float | None], exact: Mapping[str, bool], floor: float = FLOOR
) -> Belief:
    """Belief from per-candidate raw label log-probs (None = absent from the top-k list)."""
    ids = sorted(raw)
    scores, sources = [], []
    for candidate_id in ids:
        value = raw[candidate_id]
        if value is not None and exact[candidate_id]:
            scores.append(value)
            sources.append("exact")
        elif value is None or value < floor:
            scores.append(floor)
            sources.append("floor")
        else:
            scores.append(value)
            sources.append("top_k")
    return Belief(
        candidate_ids=tuple(ids),
        scores=tuple(scores),
        probs=tuple(softmax(scores)),
        sources=tuple(sources),
        raw=tuple(raw[c] for c in ids),
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
        tuple(candidate_ids), tuple(scores), tuple(norm), ("derived",) * len(norm), tuple(scores)
    )
