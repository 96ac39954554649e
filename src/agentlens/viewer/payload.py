"""What the viewer's API sends: plain JSON-ready dicts built from the store's runs, records and
trajectories. No web framework here, so this is testable (and reusable) on its own.

Long texts are cut to `PREVIEW_CHARS` in trajectory pages; `truncated` names each cut field with
its full length, and the per-step endpoint gives the whole step back.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import msgspec
import orjson

from agentlens.process.labeler import LabelProfile, label_trajectory
from agentlens.process.records import IN_SAMPLE
from agentlens.redaction import clip_head
from agentlens.step_failure import failed
from agentlens.store import Metric, Record, Run
from agentlens.trajectory import Step, Trajectory, Usage

PREVIEW_CHARS = 4000
LONG_FIELDS = ("text", "command", "observation", "arguments_json")


def run_dict(run: Run) -> dict[str, Any]:
    fields = {"label": None, "settings": {}, "summary": {}, **msgspec.to_builtins(run)}
    return fields | {"complete": run.complete}


def metric_dict(metric: Metric) -> dict[str, Any]:
    return {"value": None, "label": None, "reason": None, **msgspec.to_builtins(metric)}


def record_row(position: int, record: Record) -> dict[str, Any]:
    """A record without its body: what a run's table shows (per-step metrics are only counted)."""
    whole = [m for m in record.metrics if m.step is None]
    return {
        "position": position,
        "trajectory": record.trajectory,
        "trajectory_id": record.trajectory_id,
        "task_id": record.task_id,
        "model": record.model,
        "outcome": record.outcome,
        "metrics": [metric_dict(m) for m in whole],
        "n_step_metrics": len(record.metrics) - len(whole),
        "in_sample": any(m.name == IN_SAMPLE for m in whole),
    }


def record_full(run_id: str, position: int, record: Record) -> dict[str, Any]:
    row = record_row(position, record)
    row["run"] = run_id
    row["metrics"] = [metric_dict(m) for m in record.metrics]
    row["body"] = record.body
    return row


def metric_names(records: list[Record]) -> list[str]:
    """Metric columns in first-seen order, so a run's table keeps the scorer's own order."""
    return list(dict.fromkeys(m.name for r in records for m in r.metrics if m.step is None))


def step_dict(
    step: Step, stage: str | None, *, limit: int | None = PREVIEW_CHARS
) -> dict[str, Any]:
    """A step without its source `raw`; `arguments` as indented JSON text, long texts cut;
    `failed` by the house's one rule (the reader's flag, else the result's own report)."""
    body: dict[str, Any] = msgspec.to_builtins(msgspec.structs.replace(step, raw=None))
    body["failed"] = failed(step)
    arguments = body.pop("arguments", None)
    if arguments:
        body["arguments_json"] = orjson.dumps(arguments, option=orjson.OPT_INDENT_2).decode()
    body["stage"] = stage
    truncated = {}
    for name in LONG_FIELDS:
        value = body.get(name)
        if limit is not None and isinstance(value, str) and len(value) > limit:
            body[name] = clip_head(value, limit)
            truncated[name] = len(value)
    body["truncated"] = truncated
    return body


def stages(trajectory: Trajectory, profile: LabelProfile) -> list[str | None]:
    return list(label_trajectory(trajectory, profile))


def phases_dict(
    trajectory: Trajectory, profile: LabelProfile, labels: list[str | None] | None = None
) -> dict[str, Any]:
    """`labels`: the trajectory's `stages` under `profile`, when already known."""
    labels = stages(trajectory, profile) if labels is None else labels
    return {
        "profile": profile,
        "steps": [
            {"index": i, "stage": stage} for i, stage in enumerate(labels) if stage is not None
        ],
        "counts": dict(Counter(s for s in labels if s is not None)),
    }


STEP_PAGE = 500
"""Steps sent per answer: a 20,000-step run would otherwise be one answer of tens of MB."""


def trajectory_dict(
    digest: str, t: Trajectory, profile: LabelProfile, *, offset: int = 0, limit: int = STEP_PAGE,
    labels: list[str | None] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """The header, the whole phase timeline, and steps `offset` to `offset + limit`; `labels` as
    in `phases_dict`."""
    labels = stages(t, profile) if labels is None else labels
    page = range(offset, min(offset + limit, len(t.steps)))
    return {
        "digest": digest,
        "id": t.id,
        "task_id": t.task_id,
        "task": _cut(t.task),
        "task_length": len(t.task or ""),
        "agent": msgspec.to_builtins(t.agent),
        "model": t.model,
        "outcome": msgspec.to_builtins(t.outcome),
        "source": msgspec.to_builtins(t.source),
        "totals": totals(t),
        "profile": profile,
        "phases": dict(Counter(s for s in labels if s is not None)),
        "subtrajectories": [s.id for s in t.subtrajectories],
        "warnings": [str(w) for w in t.metadata.get("warnings", [])][:20],
        "timeline": [
            {"index": i, "stage": stage, "tool_name": t.steps[i].tool_name}
            for i, stage in enumerate(labels)
            if stage is not None
        ],
        "steps_total": len(t.steps),
        "steps_offset": offset,
        "steps": [step_dict(t.steps[i], labels[i]) for i in page],
    }


def totals(t: Trajectory) -> dict[str, Any]:
    usage = t.usage_known() or Usage()
    times = [s.timestamp for s in t.steps if s.timestamp is not None]
    return {
        "steps": len(t.steps),
        "tool_steps": len(t.tool_steps),
        "errors": sum(1 for s in t.steps if failed(s)),
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cached_tokens": usage.cached_tokens,
        "cost": t.cost_total(),
        "started": times[0].isoformat() if times else None,
        "ended": times[-1].isoformat() if times else None,
        "categories": dict(t.category_counts()),
    }


def _cut(text: str | None) -> str | None:
    return clip_head(text, PREVIEW_CHARS) if text else text


def trajectory_row(row: dict[str, Any]) -> dict[str, Any]:
    """A store summary row as JSON (the `added` time may come back as a datetime from Postgres)."""
    return {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in row.items()}
