"""Floor sensitivity (spec §6.6) re-derived from the stored raw top-k label log-probs, by hand."""

from __future__ import annotations

import math

import pytest

from agentlens.stepvalue.sensitivity import EXACT_NOTE, floor_sensitivity


def row(before: dict, after: dict, *, channel: str = "direct", exact: bool = False) -> dict:
    return {
        "channel": channel,
        "slice": "full",
        "missing": False,
        "gold_id": "a",
        "raw_scores_before": before,
        "raw_scores_after": after,
        "exact_logits": exact,
    }


def lse(xs: list[float]) -> float:
    return math.log(sum(math.exp(x) for x in xs))


def margin_gain(before: dict, after: dict, floor: float) -> float:
    def scores(raw: dict) -> dict:
        return {c: floor if v is None else lse([max(x, floor) for x in v]) for c, v in raw.items()}

    def margin(s: dict) -> float:
        return s["a"] - lse([s["b"], s["c"]])

    return margin(scores(after)) - margin(scores(before))


ROWS = [  # raw top-k variants per candidate ("A", " A", ...); None = not in the top-k list
    ({"a": [-0.2], "b": [-12.0, -14.0], "c": None}, {"a": [-15.0], "b": [-0.1], "c": [-25.0]}),
    (
        {"a": [-1.0], "b": [-2.0], "c": [-3.0, -9.0]},
        {"a": [-25.0, -28.0], "b": [-0.5], "c": [-3.0]},
    ),
]


def test_floor_table_recomputes_margin_gain_and_floor_rate_by_hand() -> None:
    (out,) = floor_sensitivity([row(b, a) for b, a in ROWS])
    assert out["n"] == out["n_top_k"] == 2
    for floor in (-10, -20, -30):
        expected = sum(margin_gain(b, a, floor) for b, a in ROWS) / 2
        assert out[f"mean_g_margin_floor{floor}"] == pytest.approx(expected)
    # row 1 always has an absent label; row 2 floors "a" after (−25) at −10 and −20 only
    assert out["floor_rate_floor-10"] == 1.0
    assert out["floor_rate_floor-20"] == 1.0
    assert out["floor_rate_floor-30"] == 0.5
    assert out["mean_g_margin_floor-10"] != pytest.approx(out["mean_g_margin_floor-30"])


def test_floor_table_says_the_floor_never_applies_to_exact_logits() -> None:
    exact = row(
        {"a": [-0.1], "b": [-40.0], "c": [-50.0]},
        {"a": [-45.0], "b": [-0.1], "c": [-9.0]},
        exact=True,
    )
    top_k = row(*ROWS[0], channel="generated-rationale-128")
    by_channel = {r["channel"]: r for r in floor_sensitivity([exact, top_k])}
    assert by_channel["direct"]["note"] == EXACT_NOTE
    assert "mean_g_margin_floor-10" not in by_channel["direct"]
    assert by_channel["generated-rationale-128"]["n_top_k"] == 1
