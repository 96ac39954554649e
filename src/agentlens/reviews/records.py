"""The records a review run keeps in the store: `review:<dimension>` per judged dimension, the
review as the body."""

from __future__ import annotations

from collections.abc import Iterable

from agentlens.reviews.judge.judge import TrajectoryReview
from agentlens.store.model import Metric, Record
from agentlens.store.records import trajectory_record
from agentlens.trajectory import Trajectory


def review_records(pairs: Iterable[tuple[Trajectory, TrajectoryReview]]) -> list[Record]:
    return [trajectory_record(t, review_metrics(r), r.to_dict()) for t, r in pairs]


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
