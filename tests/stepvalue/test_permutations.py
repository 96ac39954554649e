from __future__ import annotations

import pytest

from agentlens.stepvalue.belief import belief_from_probs
from agentlens.stepvalue.metrics import transition_metrics
from agentlens.stepvalue.permutations import (
    anisotropy,
    default_labels,
    label_mapping,
    mean_belief,
    rotate,
)

IDS = ["c1", "c2", "c3", "c4"]


def test_rotation_matches_spec_formula() -> None:
    labels = ["A", "B", "C", "D"]
    for k in range(4):
        assert rotate(labels, k) == (labels[-k:] + labels[:-k] if k else labels)
    assert label_mapping(IDS, 1) == {"A": "c2", "B": "c3", "C": "c4", "D": "c1"}
    assert default_labels(3, "numeric") == ["1", "2", "3"]


def test_four_rotations_form_a_latin_square() -> None:
    seen = {cid: set() for cid in IDS}
    for k in range(4):
        for label, cid in label_mapping(IDS, k).items():
            seen[cid].add(label)
    assert all(labels == {"A", "B", "C", "D"} for labels in seen.values())


def biased_evaluator(true: list[float], favoured: str, k: int, alpha: float = 0.6):
    """A position-biased evaluator: mixes the true belief with a preference for one label."""
    mapping = label_mapping(IDS, k)
    label_of = {cid: label for label, cid in mapping.items()}
    probs = [
        (1 - alpha) * p + alpha * (label_of[c] == favoured) for c, p in zip(IDS, true, strict=True)
    ]
    return belief_from_probs(IDS, probs)


@pytest.mark.parametrize("favoured", ["A", "C"])
def test_permutation_averaging_removes_the_label_position_effect(favoured: str) -> None:
    before_true, after_true = [0.25] * 4, [0.1, 0.6, 0.2, 0.1]
    before = [biased_evaluator(before_true, favoured, k) for k in range(4)]
    after = [biased_evaluator(after_true, favoured, k) for k in range(4)]
    alpha = 0.6
    expected_after = [(1 - alpha) * p + alpha / 4 for p in after_true]
    assert list(mean_belief(after).probs) == pytest.approx(expected_after)
    assert list(mean_belief(before).probs) == pytest.approx([0.25] * 4)
    averaged = transition_metrics(mean_belief(before), mean_belief(after), "c2")
    unbiased = transition_metrics(
        belief_from_probs(IDS, [0.25] * 4), belief_from_probs(IDS, expected_after), "c2"
    )
    assert averaged.g_margin == pytest.approx(unbiased.g_margin)
    identity = transition_metrics(before[0], after[0], "c2")
    assert identity.g_margin != pytest.approx(averaged.g_margin)


def test_anisotropy_zero_without_bias_and_positive_with_it() -> None:
    fair = [belief_from_probs(IDS, [0.1, 0.6, 0.2, 0.1]) for _ in range(4)]
    assert anisotropy(fair) == pytest.approx(0.0, abs=1e-12)
    biased = [biased_evaluator([0.1, 0.6, 0.2, 0.1], "A", k) for k in range(4)]
    assert anisotropy(biased) > 0.1
