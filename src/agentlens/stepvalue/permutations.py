"""Physical label mappings and their cyclic permutations (spec §7).

Permutation k gives candidate i the label `rotated[i]` where `rotated = labels[-k:] + labels[:-k]`
(k = 0 is the identity). With K candidates and B = K rotations every candidate takes every label
once, so averaging over them cancels a preference for a label position.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Literal

import numpy as np

from agentlens.stepvalue.belief import Belief, belief_from_probs
from agentlens.stepvalue.metrics import kl
from agentlens.stepvalue.model import EvalView

LabelScheme = Literal["letters", "numeric"]


def default_labels(k: int, scheme: LabelScheme = "letters") -> list[str]:
    if scheme == "numeric":
        return [str(i) for i in range(1, k + 1)]
    return list(string.ascii_uppercase[:k])


def rotate(labels: Sequence[str], k: int) -> list[str]:
    k %= len(labels)
    return list(labels[-k:]) + list(labels[:-k]) if k else list(labels)


def label_mapping(
    candidate_ids: Sequence[str],
    k: int,
    scheme: LabelScheme = "letters",
    labels: Sequence[str] | None = None,
) -> dict[str, str]:
    """Label -> candidate id for permutation k, in label order (A first). `labels` are the
    candidates' own physical labels (identity labelling), else the scheme's defaults."""
    labels = rotate(labels or default_labels(len(candidate_ids), scheme), k)
    pairs = sorted(zip(labels, candidate_ids, strict=True), key=lambda p: _label_key(p[0]))
    return dict(pairs)


def physical_labels(own: Sequence[str | None]) -> list[str]:
    """Each candidate's own label, else its letter by position (A, B, C, …)."""
    defaults = default_labels(len(own))
    return [label if label is not None else defaults[i] for i, label in enumerate(own)]


def view_labels(view: EvalView) -> list[str] | None:
    """The candidates' own labels when the record gives them (missing ones by position)."""
    own = [c.label for c in view.candidates]
    return physical_labels(own) if any(own) else None


def _label_key(label: str) -> tuple[int, str]:
    return (int(label), "") if label.isdigit() else (0, label)


def mean_belief(beliefs: Sequence[Belief]) -> Belief:
    """The permutation-averaged belief b̄ (beliefs are indexed by candidate id, not label)."""
    ids = beliefs[0].candidate_ids
    probs = np.mean([_aligned(b, ids) for b in beliefs], axis=0)
    return belief_from_probs(ids, list(probs))


def anisotropy(beliefs: Sequence[Belief]) -> float:
    """Channel anisotropy: mean over permutations of KL(b_π ‖ b̄); 0 when labels do not matter."""
    ids = beliefs[0].candidate_ids
    mean = mean_belief(beliefs)
    return float(np.mean([kl(_aligned(b, ids), mean.probs) for b in beliefs]))


def _aligned(belief: Belief, ids: Sequence[str]) -> list[float]:
    lookup = belief.as_dict()
    return [lookup[c] for c in ids]
