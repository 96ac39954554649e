"""Phases of each transition and per-phase aggregates (spec §9.3, §10).

Coding trajectories take their phase from the issue-3 intent labeler (E/I/V/O), falling back to
the stored stage; open-QA records use the step type, grouped into the bio-agent mechanism groups.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from typing import Any

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
    try:
        from agentlens.process.labeler import label_trajectory

        labels: Sequence[str | None] = label_trajectory(traj)
    except ImportError:
        labels = [s.stored_stage for s in traj.steps]
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
    }
