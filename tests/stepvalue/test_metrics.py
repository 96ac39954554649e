from __future__ import annotations

import math

import pytest

from agentlens.stepvalue.belief import belief_from_labels, belief_from_probs, refloor
from agentlens.stepvalue.metrics import (
    entropy,
    gold_rank,
    kl,
    margin,
    temperature_entropy,
    transition_metrics,
)

IDS = ("a", "b", "c")


def scores_belief(scores: list[float]):
    mapping = {label: cid for label, cid in zip("ABC", IDS, strict=True)}
    lps = dict(zip("ABC", scores, strict=True))
    return belief_from_labels(lps, dict.fromkeys("ABC", "exact"), mapping)


def test_entropy_and_delta_h_by_hand() -> None:
    before = belief_from_probs(IDS, [1 / 3, 1 / 3, 1 / 3])
    after = belief_from_probs(IDS, [0.5, 0.25, 0.25])
    h_after = -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25))
    m = transition_metrics(before, after, "a")
    assert entropy(after.probs) == pytest.approx(h_after)
    assert m.delta_h == pytest.approx(math.log(3) - h_after)
    assert m.delta_h_normalised == pytest.approx((math.log(3) - h_after) / math.log(3))
    assert m.gold_ll_gain == pytest.approx(math.log(0.5) - math.log(1 / 3))


def test_surprise_is_smoothed_kl_after_given_before() -> None:
    before = belief_from_probs(IDS, [0.6, 0.3, 0.1])
    after = belief_from_probs(IDS, [0.2, 0.3, 0.5])
    eps = 1e-6
    p = [(1 - eps) * x + eps / 3 for x in (0.2, 0.3, 0.5)]
    q = [(1 - eps) * x + eps / 3 for x in (0.6, 0.3, 0.1)]
    expected = sum(pi * math.log(pi / qi) for pi, qi in zip(p, q, strict=True))
    assert transition_metrics(before, after, "a").surprise == pytest.approx(expected)


def test_one_hot_flip_surprise_matches_scale_check() -> None:
    ids = ("a", "b", "c", "d")
    before = belief_from_probs(ids, [1, 0, 0, 0])
    after = belief_from_probs(ids, [0, 1, 0, 0])
    assert kl(after.probs, before.probs) == pytest.approx(math.log(4 / 1e-6), abs=0.01)


def test_margins_on_raw_scores_lse_and_max() -> None:
    belief = scores_belief([-1.0, -2.0, -3.0])
    lse_others = math.log(math.exp(-2) + math.exp(-3))
    assert margin(belief, "a", "lse") == pytest.approx(-1 - lse_others)
    assert margin(belief, "a", "max") == pytest.approx(1.0)
    assert margin(belief, "c", "max") == pytest.approx(-2.0)
    assert gold_rank(belief, "c") == 3


def test_damage_repair_and_pivots() -> None:
    right = scores_belief([-0.1, -3.0, -4.0])
    wrong = scores_belief([-3.0, -0.1, -4.0])
    damage = transition_metrics(right, wrong, "a")
    repair = transition_metrics(wrong, right, "a")
    assert (damage.damage, damage.repair, damage.pivot_from_gold) == (True, False, True)
    assert (repair.damage, repair.repair, repair.pivot_to_gold) == (False, True, True)
    assert damage.g_margin == pytest.approx(-repair.g_margin)
    assert damage.g_margin_max == pytest.approx((-3.0 - -0.1) - (-0.1 - -3.0))


def test_identical_states_give_zero_everywhere() -> None:
    belief = scores_belief([-0.7, -1.9, -5.0])
    m = transition_metrics(belief, belief, "b")
    assert (m.delta_h, m.surprise, m.g_margin, m.g_margin_max, m.gold_ll_gain) == (0, 0, 0, 0, 0)
    assert not (m.damage or m.repair or m.pivot)
    assert "ΔH" in m.reason


def test_floor_applies_to_missing_and_low_top_k_labels() -> None:
    mapping = {"A": "a", "B": "b", "C": "c"}
    belief = belief_from_labels({"A": -0.5, "B": -42.0}, {"A": "top_k", "B": "top_k"}, mapping)
    assert belief.scores == (-0.5, -20.0, -20.0)
    # §5.1: B is listed (clamped to the floor); only C, which no token maps to, is "floored"
    assert belief.sources == ("top_k", "top_k", "floor")
    assert belief.raw == ((-0.5,), (-42.0,), None)  # kept for the floor-sensitivity table
    assert belief.used_floor
    assert sum(belief.probs) == pytest.approx(1.0)


def test_top_k_variants_are_floored_one_by_one_then_merged() -> None:
    mapping = {"A": "a", "B": "b"}
    variants = {"A": [-1.0, -2.0], "B": [-25.0, -30.0]}  # e.g. "A" and " A"
    merged = {label: math.log(sum(math.exp(v) for v in vs)) for label, vs in variants.items()}
    belief = belief_from_labels(
        merged, dict.fromkeys("AB", "top_k"), mapping, label_variants=variants
    )
    assert belief.scores[0] == pytest.approx(math.log(math.exp(-1) + math.exp(-2)))
    assert belief.scores[1] == pytest.approx(math.log(2 * math.exp(-20)))  # both clamped to −20
    assert belief.sources == ("top_k", "top_k") and not belief.used_floor  # listed, only clamped
    assert refloor(belief, -30).scores[1] == pytest.approx(merged["B"])


def test_exact_logits_are_never_floored() -> None:
    mapping = {"A": "a", "B": "b"}
    belief = belief_from_labels({"A": -0.5, "B": -42.0}, dict.fromkeys("AB", "exact"), mapping)
    assert belief.scores == (-0.5, -42.0)
    assert not belief.used_floor


def test_temperature_flattens_a_saturated_belief() -> None:
    belief = scores_belief([-0.01, -12.0, -15.0])
    assert temperature_entropy(belief, 1) < temperature_entropy(belief, 10) < math.log(3)


def test_sensitivity_rows_recompute_entropy_and_surprise_by_hand() -> None:
    from agentlens.stepvalue.sensitivity import sensitivity

    before, after = {"a": 0.9, "b": 0.1}, {"a": 0.2, "b": 0.8}
    row = {
        "channel": "direct",
        "slice": "full",
        "missing": False,
        "belief_before": before,
        "belief_after": after,
    }
    (out,) = sensitivity([row])

    def h_tau(b: dict, tau: float) -> float:
        w = [p ** (1 / tau) for p in b.values()]
        q = [x / sum(w) for x in w]
        return -sum(x * math.log(x) for x in q)

    assert out["mean_delta_h_tau1"] == pytest.approx(h_tau(before, 1) - h_tau(after, 1))
    assert out["mean_delta_h_tau5"] == pytest.approx(h_tau(before, 5) - h_tau(after, 5))
    eps = 1e-6
    p = [(1 - eps) * x + eps / 2 for x in after.values()]
    q = [(1 - eps) * x + eps / 2 for x in before.values()]
    surprise = sum(pi * math.log(pi / qi) for pi, qi in zip(p, q, strict=True))
    assert out["mean_surprise_eps1e-06"] == pytest.approx(surprise)
