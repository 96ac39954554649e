"""Run the LLM judge: each trajectory × dimension is one chat call through an `LLMClient`
(cached, budgeted). Scores are 0 / 0.5 / 1; unparseable or refused answers are *unscored* and
excluded from the mean, and the unscored rate is reported beside every mean (spec §5.3, §5.5)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

from agentlens.list_text import counted
from agentlens.providers import ChatRequest, LLMClient
from agentlens.providers.prompt_dump import prompt_hash
from agentlens.reviews import DIMENSIONS
from agentlens.reviews.judge.ask import PerItem, ask_scored, dimensions_of, sample_request
from agentlens.reviews.judge.compact import Compacted, compact
from agentlens.reviews.judge.parse import ParsedReview, parse_review
from agentlens.reviews.judge.prompt import ReviewContext, build_messages, prompt_tokens
from agentlens.reviews.judge.samples import ItemSamples, SampleSummary, summarize_samples
from agentlens.reviews.judge.score_probs import ScoreDistribution, score_distribution
from agentlens.reviews.judge.structured import (
    answer_schema,
    answer_token_bound,
    parse_structured,
    reask,
)
from agentlens.trajectory import Trajectory

MAX_REVIEWED = 50

TrajectoryDimensions = PerItem[Trajectory]


@dataclass
class JudgeSettings:
    budget_tokens: int = 6000
    """Transcript budget (estimated tokens); the whole prompt adds ~600 for rubric and summary."""
    max_tokens: int = 700
    temperature: float | None = 0.0
    """`ask.sampling_temperature`: the judge role's `temperature`, else 0 (0.7 for N samples)."""
    seed: int | None = 42
    samples: int = 1
    """Judge each item this many times (sample k with seed `seed + k`); 1: once, as before."""
    structured: bool | None = None
    """Ask for the JSON answer of `structured.answer_schema`; None: wherever the backend can
    constrain answers to a schema (else the tagged free text and its parser)."""
    top_logprobs: int = 20
    """Alternatives per token asked with a structured answer, for the probability-weighted
    score (backends without log-probs ignore it); 0 asks for none."""
    reask: bool = True
    """Ask once more, showing the problem, after a schema answer without a valid score (a
    free-text answer is parsed as the released evaluator parses it, without a second ask)."""

    def is_structured(self, client: LLMClient) -> bool:
        return client.supports_json_schema if self.structured is None else self.structured


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
    prompt_sha256: str = ""
    """Hash of the exact first prompt (`--dump-prompts` writes it under this name)."""
    mode: str = "free text"
    """"schema" (constrained JSON answer) or "free text" (tagged answer, parsed)."""
    attempts: int = 1
    """2 when the first answer had no valid score and the judge was asked once more."""
    distribution: ScoreDistribution | None = None
    """The probability-weighted score and its spread, where the backend gave log-probs."""
    sample: int = 0
    samples: list[DimensionReview] = field(default_factory=list)
    """With N > 1 samples, all N (this review is the first scored one, else sample 0)."""

    @property
    def scored(self) -> bool:
        return self.score is not None

    @property
    def item_samples(self) -> ItemSamples | None:
        return ItemSamples(tuple(s.score for s in self.samples)) if self.samples else None

    @property
    def item_score(self) -> float | None:
        """What the dimension mean averages: the mean of the scored samples, or the score."""
        found = self.item_samples
        return found.mean if found else self.score

    def to_dict(self, *, with_samples: bool = True) -> dict[str, Any]:
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
            "prompt_sha256": self.prompt_sha256,
            "mode": self.mode,
            "attempts": self.attempts,
            "score_distribution": self.distribution.to_dict() if self.distribution else None,
            **(self._samples_dict() if with_samples else {}),
        }

    def _samples_dict(self) -> dict[str, Any]:
        found = self.item_samples
        if found is None:
            return {}
        return {
            "sample": self.sample,
            "sample_stats": found.to_dict(),
            "samples": [
                {**s.to_dict(with_samples=False), "sample": s.sample} for s in self.samples
            ],
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


def dimension_messages(
    traj: Trajectory,
    dimension: str,
    ctx: ReviewContext,
    settings: JudgeSettings,
    transcript: Compacted,
    structured: bool,
) -> list[dict[str, str]]:
    """The exact first prompt of one review (what `--dump-prompts` writes)."""
    return build_messages(traj, dimension, transcript, ctx, structured=structured)


def judge_transcript(traj: Trajectory, settings: JudgeSettings) -> Compacted:
    return compact(traj, settings.budget_tokens, task_elsewhere=True)


def answer_tokens(settings: JudgeSettings, dimension: str, structured: bool) -> int:
    """`max_tokens` of a call: a schema answer gets room for its bounded fields."""
    if not structured:
        return settings.max_tokens
    return max(settings.max_tokens, answer_token_bound(dimension))


async def review_dimension(
    client: LLMClient,
    traj: Trajectory,
    dimension: str,
    ctx: ReviewContext,
    settings: JudgeSettings,
    transcript: Compacted | None = None,
) -> DimensionReview:
    """One review, or with `settings.samples` N > 1, N reviews carried by the first scored one."""
    structured = settings.is_structured(client)
    transcript = transcript or judge_transcript(traj, settings)
    messages = dimension_messages(traj, dimension, ctx, settings, transcript, structured)
    if settings.samples <= 1:
        return await _review_once(client, traj, dimension, messages, settings, structured)
    done = await asyncio.gather(
        *(
            _review_once(client, traj, dimension, messages, settings, structured, sample=k)
            for k in range(settings.samples)
        )
    )
    primary = next((r for r in done if r.scored), done[0])
    primary.samples = list(done)
    return primary


async def _review_once(
    client: LLMClient, traj: Trajectory, dimension: str, messages: list[dict[str, str]],
    settings: JudgeSettings, structured: bool, sample: int | None = None,
) -> DimensionReview:  # fmt: skip
    review = DimensionReview(
        dimension, None, None, None, "", prompt_tokens(messages),
        prompt_sha256=prompt_hash(messages), mode="schema" if structured else "free text",
        sample=sample or 0,
    )  # fmt: skip
    request = _request(messages, dimension, settings, structured)
    if sample is not None:
        request = sample_request(request, sample, settings.temperature)
    parse = parse_structured if structured else parse_review
    follow_up = partial(reask, dimension=dimension, structured=True)
    asked = await ask_scored(
        client, request, lambda text: parse(text, len(traj.steps)),
        follow_up if settings.reask and structured else None,
    )  # fmt: skip
    if asked.parsed is not None and asked.response is not None:
        review.parsed, review.answer, review.attempts = (
            asked.parsed, asked.response.text, asked.attempts,
        )  # fmt: skip
        review.score, review.unscored_reason = asked.parsed.score, asked.parsed.unscored_reason
        review.distribution = score_distribution(asked.response.logprobs) if structured else None
    if asked.failure is not None:
        review.unscored_reason, review.provider_failed = f"provider error: {asked.failure}", True
    review.usage = asked.usage
    return review


def _request(
    messages: list[dict[str, str]], dimension: str, settings: JudgeSettings, structured: bool
) -> ChatRequest:
    return ChatRequest(
        messages=messages,
        temperature=settings.temperature,
        max_tokens=answer_tokens(settings, dimension, structured),
        seed=settings.seed,
        json_schema=answer_schema(dimension) if structured else None,
        top_logprobs=settings.top_logprobs if structured and settings.top_logprobs else None,
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
    transcript = judge_transcript(traj, settings)
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
    dims_of = dimensions_of(dimensions)

    async def one(traj: Trajectory) -> TrajectoryReview:
        ctx = (contexts or {}).get(traj.id)
        own = dims_of(traj)
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
    weighted: WeightedMean | None = None
    """The probability-weighted mean and the scored reviews it is over (log-prob backends)."""
    spread_mean: float | None = None
    """Mean spread of those reviews: the judge's own uncertainty, 0 (sure) to 0.5."""
    samples: SampleSummary | None = None
    """With N > 1 samples per item: agreement and the judge's sampling variance of `mean`."""

    @property
    def weighted_mean(self) -> float | None:
        return self.weighted.value if self.weighted else None

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
            **(self.weighted or WeightedMean(None, 0, self.scored, 0)).to_dict(),
            "spread_mean": self.spread_mean,
            **({"samples": self.samples.to_dict()} if self.samples else {}),
        }


def aggregate(
    reviews: Sequence[TrajectoryReview], dimensions: Sequence[str] = DIMENSIONS
) -> dict[str, DimensionSummary]:
    """Per dimension: mean of the scored reviews (2 decimals) and the unscored count; with N
    samples per item, each item counts by the mean of its scored samples."""
    out = {}
    for dim in dimensions:
        mine = [r.reviews[dim] for r in reviews if dim in r.reviews]
        kept = [r.item_score for r in mine if r.item_score is not None]
        mean = round(sum(kept) / len(kept), 2) if kept else None
        dists = [r.distribution for r in mine if r.item_score is not None]
        spreads = [d.spread for d in dists if d is not None and d.spread is not None]
        sampled = [r.item_samples for r in mine if r.item_samples is not None]
        out[dim] = DimensionSummary(
            dim, mean, len(kept), len(mine) - len(kept), weighted_mean(dists), _mean(spreads),
            summarize_samples(sampled) if sampled else None,
        )  # fmt: skip
    return out


@dataclass(frozen=True)
class WeightedMean:
    """A dimension's probability-weighted mean and the scored reviews it is over. A review whose
    "0" mass was never split between 0 and 0.5 gives a range, not a value (score_probs.py): its
    judge chose "1", or chose "0" and the next token's log-probs do not show the split. It is left
    out, and so is one without a score distribution (a free-text answer, or no log-probs)."""

    value: float | None
    of: int
    scored: int
    ranged: int

    @property
    def reason(self) -> str:
        if not self.scored:
            return "no scored review"
        text = f"mean of {self.of} of {counted(self.scored, 'scored review')}"
        if self.ranged:
            text += f"; {self.ranged} gave a range"
        if missing := self.scored - self.of - self.ranged:
            text += f"; {missing} had no score distribution"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "weighted_mean": self.value,
            "weighted_mean_of": self.of,
            "weighted_mean_reason": self.reason,
        }


def weighted_mean(dists: Sequence[ScoreDistribution | None]) -> WeightedMean:
    """The mean expected score of the scored reviews' distributions that give one."""
    values = [d.expected for d in dists if d is not None and d.expected is not None]
    ranged = sum(1 for d in dists if d is not None and d.expected is None)
    return WeightedMean(_mean(values), len(values), len(dists), ranged)


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None
