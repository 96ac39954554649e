"""What each command keeps in the store: a `Record` per trajectory, built from its own results.

Metric names are stable (reports, the viewer and `store show` read them): `score`, `tier`,
`struct`/`cov`/`coh`/`temp`/`workflow`, `waste`, `mechanism` for process scores;
`review:<dimension>` for judge reviews; `steps`, `tool_calls`, `tokens`, `cost` for imports.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentlens.process.result import ProcessResult
from agentlens.reviews.judge.judge import TrajectoryReview
from agentlens.store.content import digest
from agentlens.store.model import Metric, Record
from agentlens.trajectory import Trajectory

PROCESS_SCORER = "process/{profile}/1"
IMPORT_SCORER = "import/1"


def _record(t: Trajectory, metrics: list[Metric], body: dict[str, object]) -> Record:
    return Record(
        trajectory=digest(t), trajectory_id=t.id, task_id=t.task_id, model=t.model,
        outcome=t.outcome.status, metrics=metrics, body=body,
    )  # fmt: skip


def import_records(trajectories: Iterable[Trajectory]) -> list[Record]:
    return [_record(t, _summary_metrics(t), {}) for t in trajectories]


def _summary_metrics(t: Trajectory) -> list[Metric]:
    usage = t.usage_total()
    metrics = [
        Metric(name="steps", value=len(t.steps)),
        Metric(name="tool_calls", value=len(t.tool_steps)),
        Metric(name="tokens", value=usage.total_tokens),
    ]
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
