"""Run the LLM judge: each trajectory × dimension is one chat call through an `LLMClient`
(cached, budgeted). Scores are 0 / 0.5 / 1; unparseable or refused answers are *unscored* and
excluded from the mean, and the unscored rate is reported beside every mean (spec §5.3, §5.5)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from agentlens.errors import ProviderError
from agentlens.providers import ChatRequest, LLMClient
from agentlens.reviews import DIMENSIONS
from agentlens.reviews.judge.compact import Compacted, compact
from agentlens.reviews.judge.parse import ParsedReview, parse_review
from agentlens.reviews.judge.prompt import ReviewContext, build_messages, prompt_tokens
from agentlens.trajectory import Trajectory

MAX_REVIEWED = 50

TrajectoryDimensions = Sequence[str] | Callable[[Trajectory], Sequence[str]]
"""The dimensions of every trajectory, or a function from a trajectory to its own (`auto`)."""


@dataclass
class JudgeSettings:
    budget_tokens: int = 6000
    """Transcript budget (estimated tokens); the whole prompt adds ~600 for rubric and summary."""
    max_tokens: int = 700
    temperature: float = 0.0
    seed: int | None = 42


@dataclass
class DimensionReview:
    dimension: str
    score: float | None
    unscored_reason: str | None
    parsed: ParsedReview | None
    answer: str
    prompt_tokens_estimate: int
    usage: dict[str, int] = field(default_factory=dict)
    provider_failed: bool = False
    """The call itself failed (after retries): no answer to score, unlike an unparseable one."""

    @property
    def scored(self) -> bool:
        return self.score is not None

    def to_dict(self) -> dict[str, Any]:
        parsed = asdict(self.parsed) if self.parsed else None
        return {
            "dimension": self.dimension,
            "score": self.score,
            "status": "scored" if self.scored else "unscored",
            "unscored_reason": self.unscored_reason,
            "review": parsed,
            "answer": self.answer,
            "prompt_tokens_estimate": self.prompt_tokens_estimate,
            "usage": self.usage,
        }


@dataclass
class TrajectoryReview:
    trajectory_id: str
    task_id: str | None
    n_steps: int
    transcript_tokens: int
    original_tokens: int
    reviews: dict[str, DimensionReview]

    def to_dict(self) -> dict[str, Any]:
        return {
            "trajectory_id": self.trajectory_id,
            "task_id": self.task_id,
            "steps": self.n_steps,
            "transcript_tokens": self.transcript_tokens,
            "original_transcript_tokens": self.original_tokens,
            "reviews": {d: r.to_dict() for d, r in self.reviews.items()},
        }


async def review_dimension(
    client: LLMClient,
    traj: Trajectory,
    dimension: str,
    ctx: ReviewContext,
    settings: JudgeSettings,
    transcript: Compacted | None = None,
) -> DimensionReview:
    transcript = transcript or compact(traj, settings.budget_tokens)
    messages = build_messages(traj, dimension, transcript, ctx)
    estimate = prompt_tokens(messages)
    request = ChatRequest(
        messages=messages,
        temperature=settings.temperature,
        max_tokens=settings.max_tokens,
        seed=settings.seed,
    )
    try:
        answer = await client.chat(request)
    except ProviderError as exc:
        reason = f"provider error: {exc}"
        return DimensionReview(dimension, None, reason, None, "", estimate, provider_failed=True)
    parsed = parse_review(answer.text, len(traj.steps))
    usage = {
        "prompt_tokens": answer.usage.prompt_tokens,
        "completion_tokens": answer.usage.completion_tokens,
    }
    return DimensionReview(
        dimension, parsed.score, parsed.unscored_reason, parsed, answer.text, estimate, usage
    )


async def review_trajectory(
    client: LLMClient,
    traj: Trajectory,
    *,
    dimensions: Sequence[str] = DIMENSIONS,
    ctx: ReviewContext | None = None,
    settings: JudgeSettings | None = None,
) -> TrajectoryReview:
    """Judge one trajectory on each dimension (calls run concurrently, bounded by the client)."""
    ctx = ctx or ReviewContext()
    settings = settings or JudgeSettings()
    transcript = compact(traj, settings.budget_tokens)
    done = await asyncio.gather(
        *(review_dimension(client, traj, d, ctx, settings, transcript) for d in dimensions)
    )
    return TrajectoryReview(
        traj.id,
        traj.task_id,
        len(traj.steps),
        transcript.tokens,
        transcript.original_tokens,
        {r.dimension: r for r in done},
    )


def select_for_review(trajs: Sequence[Trajectory], cap: int = MAX_REVIEWED) -> list[Trajectory]:
    """At most `cap` trajectories, by a deterministic shuffle with seed 42 (spec §5.5)."""
    ordered = sorted(trajs, key=lambda t: t.id)
    if len(ordered) <= cap:
        return ordered
    random.Random(42).shuffle(ordered)
    return sorted(ordered[:cap], key=lambda t: t.id)


async def review_run(
    client: LLMClient,
    trajs: Sequence[Trajectory],
    *,
    dimensions: TrajectoryDimensions = DIMENSIONS,
    contexts: dict[str, ReviewContext] | None = None,
    settings: JudgeSettings | None = None,
    on_done: Callable[[TrajectoryReview], None] | None = None,
) -> list[TrajectoryReview]:
    async def one(traj: Trajectory) -> TrajectoryReview:
        ctx = (contexts or {}).get(traj.id)
        own = dimensions(traj) if callable(dimensions) else dimensions
        result = await review_trajectory(client, traj, dimensions=own, ctx=ctx, settings=settings)
        if on_done:
            on_done(result)
        return result

    return list(await asyncio.gather(*(one(t) for t in select_for_review(trajs))))


@dataclass
class DimensionSummary:
    dimension: str
    mean: float | None
    scored: int
    unscored: int

    @property
    def unscored_rate(self) -> float:
        total = self.scored + self.unscored
        return round(self.unscored / total, 4) if total else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "mean": self.mean,
            "scored": self.scored,
            "unscored": self.unscored,
            "unscored_rate": self.unscored_rate,
        }


def aggregate(
    reviews: Sequence[TrajectoryReview], dimensions: Sequence[str] = DIMENSIONS
) -> dict[str, DimensionSummary]:
    """Per dimension: mean of the scored reviews (2 decimals) and the unscored count."""
    out = {}
    for dim in dimensions:
        scores = [r.reviews[dim].score for r in reviews if dim in r.reviews]
        kept = [s for s in scores if s is not None]
        mean = round(sum(kept) / len(kept), 2) if kept else None
        out[dim] = DimensionSummary(dim, mean, len(kept), len(scores) - len(kept))
    return out
