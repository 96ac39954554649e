"""Per-phase aggregates and the §9.3 direct-against-rationale pairing, checked by hand."""

from __future__ import annotations

import pytest

from agentlens.stepvalue.phases import most_negative, paired_phases, phase_aggregates


def row(step: int, phase: str, channel: str, g: float, damage=False, repair=False) -> dict:
    return {
        "trajectory_id": "t1",
        "step_id": f"s{step}",
        "slice": "full",
        "channel": channel,
        "phase": phase,
        "g_margin": g,
        "margin_before": 1.0,
        "margin_after": 1.0 + g,
        "surprise": 0.0,
        "delta_h": 0.0,
        "flags": [],
        "missing": False,
        "damage": damage,
        "repair": repair,
    }


# step: (phase, direct G, rationale G, rationale damages?, direct repairs?)
STEPS = {
    0: ("retrieve", 1.0, -3.0, True, False),
    1: ("extract", 0.5, -1.0, False, True),
    2: ("extract", -0.5, -2.0, True, False),
    3: ("audit", 2.0, 1.0, False, False),
}


def rows() -> list[dict]:
    out = []
    for i, (phase, d, r, r_damage, d_repair) in STEPS.items():
        out.append(row(i, phase, "direct", d, repair=d_repair))
        out.append(row(i, phase, "generated-rationale-128", r, damage=r_damage))
    return out


def test_paired_phases_by_hand() -> None:
    paired = {p["phase"]: p for p in paired_phases(rows(), "generated-rationale-128")}
    extract = paired["extract"]
    assert extract["n_paired"] == 2
    assert extract["mean_g_margin_baseline"] == pytest.approx((0.5 - 0.5) / 2)
    assert extract["mean_g_margin_channel"] == pytest.approx((-1.0 - 2.0) / 2)
    assert extract["mean_g_margin_delta"] == pytest.approx(((-1.0 - 0.5) + (-2.0 + 0.5)) / 2)
    assert extract["channel_damage_rate"] == pytest.approx(0.5)
    assert extract["protocol_damage_count"] == 1  # step 2
    assert extract["protocol_repair_loss_count"] == 1  # step 1: direct repairs, rationale not
    # mechanism groups (spec §10): audit is in internal_transformation and self_verification
    internal = paired["group:internal_transformation"]
    assert internal["n_paired"] == 3 and paired["group:self_verification"]["n_paired"] == 1
    assert paired["group:external_evidence"]["mean_g_margin_channel"] == pytest.approx(-3.0)


def test_most_negative_phases_per_channel() -> None:
    worst = most_negative(phase_aggregates(rows()), k=2)
    rationale = [r["phase"] for r in worst if r["channel"] == "generated-rationale-128"]
    assert rationale == ["retrieve", "extract"]  # means -3.0 and -1.5; groups are not phases
