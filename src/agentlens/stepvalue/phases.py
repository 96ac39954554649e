"""Phases of each transition and per-phase aggregates (spec §9.3, §10).

Coding trajectories take their phase from the issue-3 intent labeler (E/I/V/O), falling back to
the stored stage; open-QA records use the step type, grouped into the bio-agent mechanism groups.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from typing import Any

from agentlens.process.labeler import label_trajectory
from agentlens.trajectory import Trajectory

STAGE_NAMES = {"E": "exploration", "I": "implementation", "V": "verification", "O": "orchestration"}
MECHANISM_GROUPS = {
    "external_evidence": {"retrieve"},
    "task_framing": {"classify", "plan", "validate_plan"},
    "internal_transformation": {
        "extract",
        "draft",
        "audit",
        "revise",
        "advisory_verify",
        "post_audit",
        "finalize",
    },
    "self_verification": {"audit", "revise", "advisory_verify", "post_audit", "finalize"},
}


def coding_phases(traj: Trajectory) -> list[str | None]:
    """One phase name per `traj.steps` element (None for the task message)."""
    labels: Sequence[str | None] = label_trajectory(traj)
    return [STAGE_NAMES.get(label or "", label) for label in labels]


def groups_of(phase: str | None) -> list[str]:
    return [name for name, members in MECHANISM_GROUPS.items() if phase in members]


def phase_aggregates(
    rows: Iterable[dict[str, Any]], value: str = "g_margin"
) -> list[dict[str, Any]]:
    """Per (channel, slice, phase): n, mean/median G, damage/repair counts and rates, mean S."""
    buckets: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for row in rows:
        if row.get("missing"):
            continue
        phase = row.get("phase") or "unlabelled"
        for name in [phase, *(f"group:{g}" for g in groups_of(phase))]:
            buckets.setdefault((row["channel"], row["slice"], name), []).append(row)
    return [_aggregate(key, items, value) for key, items in sorted(buckets.items())]


def _aggregate(key: tuple[str, str, str], rows: list[dict[str, Any]], value: str) -> dict[str, Any]:
    values = [r[value] for r in rows]
    n = len(rows)
    damaged = [r for r in rows if r["damage"]]
    correct_kept = sum(1 for r in rows if r["margin_before"] > 0 and r["margin_after"] > 0)
    wrong_kept = sum(1 for r in rows if r["margin_before"] <= 0 and r["margin_after"] <= 0)
    return {
        "channel": key[0],
        "slice": key[1],
        "phase": key[2],
        "n": n,
        f"mean_{value}": statistics.fmean(values),
        f"median_{value}": statistics.median(values),
        "damage": len(damaged),
        "damage_rate": len(damaged) / n,
        "repair": sum(1 for r in rows if r["repair"]),
        "repair_rate": sum(1 for r in rows if r["repair"]) / n,
        "unchanged_correct": correct_kept,
        "unchanged_wrong": wrong_kept,
        "mean_surprise": statistics.fmean(r["surprise"] for r in rows),
        "mean_surprise_damaged": statistics.fmean(r["surprise"] for r in damaged)
        if damaged
        else None,
        "mean_delta_h": statistics.fmean(r["delta_h"] for r in rows),
        "floor_steps": sum(1 for r in rows if "used_floor_score" in r["flags"]),
    }


Pair = tuple[dict[str, Any], dict[str, Any]]


def paired_phases(
    rows: Sequence[dict[str, Any]], channel: str, baseline: str = "direct", value: str = "g_margin"
) -> list[dict[str, Any]]:
    """§9.3 direct against a protocol, paired by transition, per (slice, phase) and per mechanism
    group: mean G of each, their mean difference, damage and repair rates of each,
    `protocol_damage_count` (the protocol damages, the baseline does not) and
    `protocol_repair_loss_count` (the baseline repairs, the protocol does not)."""

    def key(r: dict[str, Any]) -> tuple[str, str, str]:
        return (r["trajectory_id"], r["step_id"], r["slice"])

    base = {key(r): r for r in rows if r["channel"] == baseline and not r.get("missing")}
    buckets: dict[tuple[str, str], list[Pair]] = {}
    for row in rows:
        other = base.get(key(row))
        if row["channel"] != channel or row.get("missing") or other is None:
            continue
        phase = row.get("phase") or "unlabelled"
        for name in [phase, *(f"group:{g}" for g in groups_of(phase))]:
            buckets.setdefault((row["slice"], name), []).append((other, row))
    return [
        {"channel": channel, "baseline": baseline, "slice": which, "phase": name}
        | _paired(pairs, value)
        for (which, name), pairs in sorted(buckets.items())
    ]


def _paired(pairs: list[Pair], value: str) -> dict[str, Any]:
    def rate(flag: str, side: int) -> float:
        return sum(1 for p in pairs if p[side][flag]) / len(pairs)

    return {
        "n_paired": len(pairs),
        f"mean_{value}_baseline": statistics.fmean(b[value] for b, _ in pairs),
        f"mean_{value}_channel": statistics.fmean(r[value] for _, r in pairs),
        f"mean_{value}_delta": statistics.fmean(r[value] - b[value] for b, r in pairs),
        "baseline_damage_rate": rate("damage", 0),
        "channel_damage_rate": rate("damage", 1),
        "baseline_repair_rate": rate("repair", 0),
        "channel_repair_rate": rate("repair", 1),
        "protocol_damage_count": sum(1 for b, r in pairs if r["damage"] and not b["damage"]),
        "protocol_repair_loss_count": sum(1 for b, r in pairs if b["repair"] and not r["repair"]),
    }


def most_negative(phases: Sequence[dict[str, Any]], k: int = 5) -> list[dict[str, Any]]:
    """Per (channel, slice), the k phases (not groups) with the most negative mean G (§9.3)."""
    out: list[dict[str, Any]] = []
    keys = sorted({(r["channel"], r["slice"]) for r in phases})
    for channel, which in keys:
        own = [
            r
            for r in phases
            if (r["channel"], r["slice"]) == (channel, which)
            and not r["phase"].startswith("group:")
        ]
        out += sorted(own, key=lambda r: r["mean_g_margin"])[:k]
    return out
