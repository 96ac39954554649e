"""Belief formation (spec §5): label log-probs -> raw per-candidate scores s(c) -> belief b(c).

`s(c) = max(logprob(label(c)), floor)`; the provider has already merged label variants such as
"A" / " A" (logsumexp) and given an absent top-k label the floor. `b = softmax(s)` over the
candidates only: a renormalisation over the label tokens, ignoring vocabulary mass elsewhere.
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

    @property
    def used_floor(self) -> bool:
        return "floor" in self.sources

    def as_dict(self) -> dict[str, float]:
        return dict(zip(self.candidate_ids, self.probs, strict=True))

    def score_of(self, candidate_id: str) -> float:
        return self.scores[self.candidate_ids.index(candidate_id)]


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
    ids, scores, sources = [], [], []
    for label, candidate_id in mapping.items():
        value = label_logprobs.get(label)
        source = label_sources.get(label, "floor")
        if value is None or value < floor:
            value, source = floor, "floor"
        ids.append(candidate_id)
        scores.append(float(value))
        sources.append(source)
    order = sorted(range(len(ids)), key=lambda i: ids[i])
    ids = [ids[i] for i in order]
    scores = [scores[i] for i in order]
    return Belief(
        candidate_ids=tuple(ids),
        scores=tuple(scores),
        probs=tuple(softmax(scores)),
        sources=tuple(sources[i] for i in order),
    )


def belief_from_probs(candidate_ids: Sequence[str], probs: Sequence[float]) -> Belief:
    """A belief given directly as probabilities (scores = log p), e.g. an averaged belief."""
    total = float(sum(probs))
    norm = [float(p) / total for p in probs]
    scores = [math.log(p) if p > 0 else -math.inf for p in norm]
    return Belief(tuple(candidate_ids), tuple(scores), tuple(norm), ("derived",) * len(norm))
