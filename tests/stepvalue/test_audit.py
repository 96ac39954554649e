from __future__ import annotations

import pytest

from agentlens.stepvalue.audit import audit_sample, channel_effect, cluster_bootstrap_ci, gap_ci


def row(traj: str, step: int, channel: str, g: float, flags=(), damage=False) -> dict:
    return {
        "trajectory_id": traj,
        "step_id": f"s{step}",
        "slice": "full",
        "channel": channel,
        "phase": "explore",
        "g_margin": g,
        "flags": list(flags),
        "missing": False,
        "damage": damage,
        "repair": False,
    }


DIRECT = [1.0, -2.0, 0.0, 3.0, 0.5, -1.0]
RATIONALE = [-1.0, -2.5, 4.0, 3.0, -0.5, 2.0]


def rows() -> list[dict]:
    out = []
    for i, (d, r) in enumerate(zip(DIRECT, RATIONALE, strict=True)):
        traj = "t1" if i < 3 else "t2"
        out.append(row(traj, i, "direct", d))
        out.append(row(traj, i, "rationale", r, damage=i == 0))
    return out


def test_channel_effect_by_hand() -> None:
    effect = channel_effect(rows(), "rationale", resamples=2000)
    gaps = [r - d for d, r in zip(DIRECT, RATIONALE, strict=True)]
    assert effect["n"] == 6
    assert effect["mean_gap"] == pytest.approx(sum(gaps) / 6)
    assert effect["mean_abs_gap"] == pytest.approx(sum(abs(g) for g in gaps) / 6)
    # both non-zero at 0,1,3,4,5; signs differ at 0, 4, 5
    assert effect["sign_disagreement_rate"] == pytest.approx(3 / 5)
    assert effect["damage_rate"] == pytest.approx(1 / 6)
    assert effect["protocol_damage_count"] == 1  # the rationale damages step 0, direct does not
    assert effect["protocol_repair_loss_count"] == 0
    # two trajectories: a percentile interval would just be their two mean gaps
    assert effect["mean_gap_ci95"] is None
    assert effect["mean_gap_ci95_na"].startswith("n/a: 2 trajectories")


def test_the_gap_ci_needs_four_trajectories_to_be_more_than_their_range() -> None:
    import numpy as np

    for m in (2, 3):  # the bootstrap "CI" of m < 4 clusters is the range of the cluster means
        ci = cluster_bootstrap_ci(np.arange(float(m)), [str(i) for i in range(m)])
        assert ci == [0.0, m - 1.0]
        assert gap_ci(np.arange(float(m)), [str(i) for i in range(m)])["mean_gap_ci95"] is None
    out = gap_ci(np.arange(4.0), ["a", "b", "c", "d"])
    low, high = out["mean_gap_ci95"]
    assert 0.0 < low < 1.5 < high < 3.0 and out["mean_gap_ci95_na"] is None


def test_one_trajectory_has_no_channel_effect_ci() -> None:
    one = [r for r in rows() if r["trajectory_id"] == "t1"]
    effect = channel_effect(one, "rationale", resamples=500)
    assert effect["n"] == 3
    assert effect["mean_gap_ci95"] is None
    assert effect["mean_gap_ci95_na"].startswith("n/a: 1 trajectory")


def test_equal_gaps_in_every_trajectory_give_no_zero_width_ci() -> None:
    import numpy as np

    out = gap_ci(np.array([2.0, 2.0, 2.0, 2.0]), ["a", "b", "c", "d"], resamples=500)
    assert out["mean_gap_ci95"] is None and "same mean gap" in out["mean_gap_ci95_na"]


def test_cluster_bootstrap_resamples_trajectories_not_steps() -> None:
    import numpy as np

    values = np.array([1.0, 1.0, 1.0, 5.0])
    ci = cluster_bootstrap_ci(values, ["a", "a", "a", "b"], resamples=500)
    # only two clusters: means are 1 (a,a), 5 (b,b) or (3+5)/4 = 2 (a,b)
    assert ci[0] >= 1.0 and ci[1] <= 5.0


def test_largest_gap_and_random_samples_are_labelled_and_differ() -> None:
    data = [
        *rows(),
        row("t3", 9, "direct", 0.0),
        row("t3", 9, "rationale", 50.0, flags=["used_floor_score"]),
    ]
    biased = audit_sample(data, "rationale", selection="largest-gap", n=2, per_trajectory=1)
    assert [r["step_id"] for r in biased] == [
        "s2",
        "s5",
    ]  # |gap| 4 (t1) and 3 (t2); floored row excluded
    assert all("biased" in r["selection"] for r in biased)
    control = audit_sample(data, "rationale", selection="random", n=6)
    assert all("unbiased control" in r["selection"] for r in control)
    assert sorted(r["step_id"] for r in control) == [f"s{i}" for i in range(6)]
    assert control[0]["cue_retention_label"] is None


def test_floor_or_missing_counts_the_protocols_own_rows() -> None:
    data = rows()
    data[0]["flags"] = ["used_floor_score"]  # direct, step 0: the baseline's floor
    data[3]["flags"] = ["used_floor_score"]  # rationale, step 1
    data[5]["flags"] = ["missing_labels"]  # rationale, step 2
    data[7]["flags"] = ["rationale_leak"]  # rationale, step 3: neither floor nor missing
    assert channel_effect(data, "rationale", resamples=10)["floor_or_missing"] == 2
