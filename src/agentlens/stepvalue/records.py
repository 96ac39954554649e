"""The records a step-value run keeps in the store: `<channel>:delta_h|surprise|g_margin` per
step; the body holds the per-channel summaries and, for the report's chart, the evaluator's
belief per candidate before and after each step (full slice, identity labelling)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentlens.stepvalue.evaluate import StepValueResult
from agentlens.store.content import digest
from agentlens.store.model import Metric, Record, Run
from agentlens.store.records import trajectory_record
from agentlens.trajectory import Trajectory

STEP_VALUES = ("delta_h", "surprise", "g_margin")
"""Per step and channel: entropy movement ΔH, Bayesian surprise S, gold-margin gain G."""


def stepvalue_records(
    trajectories: Iterable[Trajectory], steps: list[dict[str, Any]], summaries: list[dict[str, Any]]
) -> list[Record]:
    """One record per trajectory the run scored: `<channel>:<value>` metrics per step (full
    slice; the other slices stay in the body), the per-channel summaries as the body."""
    by_id: dict[str, list[dict[str, Any]]] = {}
    for row in steps:
        by_id.setdefault(row["trajectory_id"], []).append(row)
    records = []
    for t in trajectories:
        rows = by_id.get(t.id)
        if rows is None:
            continue
        body = {
            "summaries": [s for s in summaries if s["trajectory_id"] == t.id],
            "gold_id": rows[0]["gold_id"],
            "beliefs": _beliefs(rows),
        }
        records.append(trajectory_record(t, _step_metrics(rows), body))
    return records


def _beliefs(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"channel": row["channel"], "index": row["index"], "phase": row["phase"],
         "before": row["belief_before"], "after": row["belief_after"]}
        for row in rows
        if row["slice"] == "full" and not row["missing"]
    ]  # fmt: skip


def _step_metrics(rows: list[dict[str, Any]]) -> list[Metric]:
    return [
        Metric(
            name=f"{row['channel']}:{name}",
            value=row[name],
            step=row["index"],
            reason=row.get("reason") if name == "delta_h" else None,
        )
        for row in rows
        if row["slice"] == "full" and not row["missing"]
        for name in STEP_VALUES
    ]


def stepvalue_run(
    evaluator: str, label: str | None, trajectories: list[Trajectory], result: StepValueResult
) -> tuple[Run, list[Trajectory], list[Record]]:
    """What the store keeps of a step-value run: the run, the trajectories it scored and
    their records."""
    records = stepvalue_records(trajectories, result.steps, result.trajectory_summaries())
    scored = {r.trajectory for r in records}
    config = result.config
    run = Run(
        kind="stepvalue",
        scorer=f"stepvalue/{evaluator}",
        label=label,
        settings={"channels": list(config.channels), "permutations": config.permutations},
        summary=result.summary(),
    )
    return run, [t for t in trajectories if digest(t) in scored], records
