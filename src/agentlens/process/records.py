"""The records a process-scoring run keeps in the store: `score`, `tier`, one metric per signal
(`struct`, `cov`, `coh`, `temp`, `workflow`), `waste`, `mechanism` and, for a donor of the
reference, `in_sample`; the body is the result's `to_dict()` (`agentlens score --json`)."""

from __future__ import annotations

from collections.abc import Iterable

from agentlens.process.result import ProcessResult
from agentlens.store.model import Metric, Record
from agentlens.store.records import trajectory_record
from agentlens.trajectory import Trajectory

PROCESS_SCORER = "process/{profile}/1"
SIGNAL_METRICS = {"waste": "waste_severity"}
"""Signals kept under another name: calibrated's `waste` signal (wasted steps / steps) would be a
second metric named `waste` beside the count, and readers take the first."""


IN_SAMPLE = "in_sample"
IN_SAMPLE_REASON = (
    "one of the reference's donors: scored against a graph built from itself, so its score "
    "flatters it"
)


def score_records(pairs: Iterable[tuple[Trajectory, ProcessResult]]) -> list[Record]:
    return [trajectory_record(t, process_metrics(r), r.to_dict()) for t, r in pairs]


def process_metrics(r: ProcessResult) -> list[Metric]:
    metrics = [
        Metric(name="score", value=r.score, label=r.tier, reason=r.composite.reason),
        Metric(name="tier", label=r.tier or "none", reason=r.tier_reason),
    ]
    metrics += [
        Metric(name=SIGNAL_METRICS.get(k, k), value=s.value, reason=s.reason)
        for k, s in r.signals.items()
    ]
    metrics.append(Metric(name="waste", value=r.total_wasted_steps, reason=r.waste_reason))
    if r.mechanism:
        metrics.append(Metric(name="mechanism", label=r.mechanism_name, reason=r.mechanism[1]))
    if r.in_sample:  # a metric, not only the body: pages of records are read without bodies
        metrics.append(Metric(name=IN_SAMPLE, label="donor", reason=IN_SAMPLE_REASON))
    return metrics
