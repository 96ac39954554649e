"""What each command keeps in the store: a `Record` per trajectory, built from its own results.

Metric names are stable (reports, the viewer and `store show` read them): `score`, `tier`,
`struct`/`cov`/`coh`/`temp`/`workflow`, `waste`, `mechanism` for process scores;
`review:<dimension>` for judge reviews; `<channel>:delta_h|surprise|g_margin` per step for step
value; `formal_passed`, `verifiers_passed`, `termination`, … for scenario runs; `steps`,
`tool_calls`, `tokens`, `cost` for imports.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from agentlens.process.result import ProcessResult
from agentlens.reviews.judge.judge import TrajectoryReview
from agentlens.store.content import digest
from agentlens.store.model import Metric, Record
from agentlens.trajectory import Trajectory

if TYPE_CHECKING:
    from agentlens.scenarios.session import SessionResult

PROCESS_SCORER = "process/{profile}/1"
IMPORT_SCORER = "import/1"


def _record(t: Trajectory, metrics: list[Metric], body: dict[str, Any]) -> Record:
    return Record(
        trajectory=digest(t), trajectory_id=t.id, task_id=t.task_id, model=t.model,
        outcome=t.outcome.status, metrics=metrics, body=body,
    )  # fmt: skip


def import_records(trajectories: Iterable[Trajectory]) -> list[Record]:
    return [_record(t, _summary_metrics(t), {}) for t in trajectories]


def _summary_metrics(t: Trajectory) -> list[Metric]:
    metrics = [
        Metric(name="steps", value=len(t.steps)),
        Metric(name="tool_calls", value=len(t.tool_steps)),
    ]
    usage = t.usage_known()
    if usage is not None:  # no usage in the trace: unknown, not 0
        metrics.append(Metric(name="tokens", value=usage.total_tokens))
    cost = t.cost_total()
    return metrics + ([Metric(name="cost", value=cost)] if cost is not None else [])


def score_records(pairs: Iterable[tuple[Trajectory, ProcessResult]]) -> list[Record]:
    return [_record(t, process_metrics(r), r.to_dict()) for t, r in pairs]


def process_metrics(r: ProcessResult) -> list[Metric]:
    metrics = [
        Metric(name="score", value=r.score, label=r.tier, reason=r.composite.reason),
        Metric(name="tier", label=r.tier or "none", reason=r.tier_reason),
    ]
    metrics += [Metric(name=k, value=s.value, reason=s.reason) for k, s in r.signals.items()]
    metrics.append(Metric(name="waste", value=r.total_wasted_steps))
    if r.mechanism:
        metrics.append(Metric(name="mechanism", label=r.mechanism_name, reason=r.mechanism[1]))
    return metrics


def review_records(pairs: Iterable[tuple[Trajectory, TrajectoryReview]]) -> list[Record]:
    return [_record(t, review_metrics(r), r.to_dict()) for t, r in pairs]


def review_metrics(r: TrajectoryReview) -> list[Metric]:
    return [
        Metric(
            name=f"review:{d}",
            value=rev.score,
            label="scored" if rev.scored else "unscored",
            reason=rev.unscored_reason or (rev.parsed.review if rev.parsed else None),
        )
        for d, rev in r.reviews.items()
    ]


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
        body = {"summaries": [s for s in summaries if s["trajectory_id"] == t.id]}
        records.append(_record(t, _step_metrics(rows), body))
    return records


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


def scenario_records(sessions: Iterable[SessionResult]) -> list[Record]:
    """One record per scenario × persona run: formal pass (1/0, or none for a failed run), the
    share of verifiers passed, user messages, steps, and why the dialog stopped."""
    return [_record(s.trajectory, _scenario_metrics(s), _scenario_body(s)) for s in sessions]


def _scenario_metrics(session: SessionResult) -> list[Metric]:
    meta, formal = session.trajectory.metadata, session.verification
    metrics = [
        Metric(
            name="formal_passed",
            value=None if formal is None else float(formal.passed),
            label="failed run" if session.failed else None,
            reason=str(meta.get("termination_reason") or ""),
        ),
        Metric(name="termination", label=str(session.termination.stop)),
        Metric(name="user_messages", value=meta.get("user_messages")),
        Metric(name="steps", value=len(session.trajectory.steps)),
        Metric(name="simulator_cost", value=session.simulator_cost),
    ]
    if formal is not None:
        metrics.append(Metric(name="verifiers_passed", value=formal.fraction_passed))
    return metrics


def _scenario_body(session: SessionResult) -> dict[str, Any]:
    formal = session.verification
    return {"formal": formal.to_dict() if formal else None, "duration_s": session.duration_s}
