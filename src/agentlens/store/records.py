"""The store's own records: `trajectory_record` builds the `Record` of one trajectory from the
metrics and body a domain computed (each domain's `records.py` names its metrics); an import keeps
what every trajectory has, its size, tokens and cost.

Metric names are stable (reports, the viewer and `store show` read them): `steps`,
`tool_calls`, `tokens`, `cost` for imports; the domains' own are listed in their `records.py`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentlens.store.content import digest
from agentlens.store.model import Metric, Record
from agentlens.trajectory import Trajectory

IMPORT_SCORER = "import/1"


def trajectory_record(t: Trajectory, metrics: list[Metric], body: dict[str, Any]) -> Record:
    return Record(
        trajectory=digest(t), trajectory_id=t.id, task_id=t.task_id, model=t.model,
        outcome=t.outcome.status, metrics=metrics, body=body,
    )  # fmt: skip


def import_records(trajectories: Iterable[Trajectory]) -> list[Record]:
    return [import_record(t) for t in trajectories]


def import_record(t: Trajectory) -> Record:
    return trajectory_record(t, _summary_metrics(t), {})


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
