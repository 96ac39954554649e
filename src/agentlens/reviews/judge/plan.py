"""What a `review` run will send, before it sends anything: the context each trajectory is judged
with, the exact first prompt of every call (`--dump-prompts`), and the calls, tokens and dollars
they add up to per model (`--estimate`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agentlens.list_text import counted
from agentlens.providers.client import LLMClient
from agentlens.providers.pricing import PriceTable
from agentlens.providers.prompt_dump import PlannedCall
from agentlens.providers.types import TokenUsage
from agentlens.reviews.judge.end_state import final_diff, outcome
from agentlens.reviews.judge.judge import (
    JudgeSettings,
    TrajectoryReview,
    answer_tokens,
    dimension_messages,
    judge_transcript,
    select_for_review,
)
from agentlens.reviews.judge.prompt import ReviewContext, prompt_tokens
from agentlens.reviews.judge.structured import answer_schema
from agentlens.trajectory import Trajectory


def review_context(traj: Trajectory, repo_diff: str | None) -> ReviewContext:
    """`--repo`'s diff when given; a scenario run brings its own workspace diff and verdicts;
    otherwise the final diff and outcome the trajectory itself records."""
    from agentlens.reviews.scenario_evidence import scenario_context

    own = scenario_context(traj)
    if own is not None:
        if repo_diff is not None:
            own.final_diff = repo_diff
        return own
    diff = repo_diff if repo_diff is not None else final_diff(traj)
    return ReviewContext(final_diff=diff, outcome=outcome(traj))


def planned_calls(
    trajs: Sequence[Trajectory],
    dimensions_of: Callable[[Trajectory], Sequence[str]],
    contexts: dict[str, ReviewContext],
    settings: JudgeSettings,
    structured: bool,
) -> list[PlannedCall]:
    """The first call of every review `review_run` would make, with its exact messages."""
    calls = []
    for traj in select_for_review(trajs):
        transcript = judge_transcript(traj, settings)
        ctx = contexts.get(traj.id) or ReviewContext()
        for dim in dimensions_of(traj):
            messages = dimension_messages(traj, dim, ctx, settings, transcript, structured)
            schema = answer_schema(dim) if structured else None
            limit = answer_tokens(settings, dim, structured)
            calls.append(PlannedCall(traj.id, dim, messages, schema, limit))
    return calls


@dataclass
class Estimate:
    model: str
    calls: int
    input_tokens: int
    output_tokens: int
    """At most: the calls' `max_tokens` summed (a judge usually writes less)."""
    cost: float | None
    """Dollars at most, None when the model has no price ("unknown")."""
    price_as_of: str | None = None

    def line(self) -> str:
        if self.cost is None:
            cost = "cost unknown (no price for this model; add it to prices.yaml)"
        else:
            dated = f", prices of {self.price_as_of}" if self.price_as_of else ""
            cost = f"cost ≤ ${self.cost:.4f}{dated}"
        return (
            f"{self.model}: {self.calls} calls (up to {2 * self.calls} with re-asks), "
            f"input ~{self.input_tokens:,} tokens, output ≤ {self.output_tokens:,} tokens, {cost}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens_max": self.output_tokens,
            "cost_usd_max": self.cost,
            "price_as_of": self.price_as_of,
        }


def estimate(
    calls: Sequence[PlannedCall], model: str, prices: PriceTable, *, free: bool, samples: int = 1
) -> Estimate:
    """Calls, tokens and dollars of `calls` on `model` (its model part, as priced), each call
    made `samples` times (`--samples N`: N× the calls, the tokens and the cost)."""
    tokens_in = samples * sum(prompt_tokens(c.messages) for c in calls)
    tokens_out = samples * sum(c.max_tokens for c in calls)
    price = None if free else prices.lookup(model)
    usage = TokenUsage(prompt_tokens=tokens_in, completion_tokens=tokens_out)
    cost = 0.0 if free else price.cost(usage) if price else None
    return Estimate(
        model, samples * len(calls), tokens_in, tokens_out, cost, price.as_of if price else None
    )


def unscored_dimensions(reviews: Sequence[TrajectoryReview]) -> list[str]:
    """Dimensions reviewed at least once with not one scored answer."""
    seen: dict[str, bool] = {}
    for review in reviews:
        for dim, r in review.reviews.items():
            seen[dim] = seen.get(dim, False) or r.scored
    return [dim for dim, scored in seen.items() if not scored]


def run_summary(client: LLMClient, reviews: Sequence[TrajectoryReview], wall_s: float) -> str:
    """One line after a run: calls made and re-asked, retries, wall time, and how long a call
    waited for its turn."""
    first = sum(len(r.reviews) for r in reviews)
    answers = [s for r in reviews for d in r.reviews.values() for s in (d.samples or [d])]
    reasked = sum(a.attempts - 1 for a in answers)
    stats = client.stats
    per = wall_s / len(reviews) if reviews else 0.0
    why = f" ({'; '.join(sorted(set(stats.retry_reasons)))})" if stats.retry_reasons else ""
    return (
        f"judge {client.name}: {counted(first, 'review')}, {counted(stats.calls, 'call')} made "
        f"({counted(reasked, 're-ask')}, {stats.cache_hits} from cache), "
        f"{counted(stats.retries, 'retry')}{why}; "
        f"took {wall_s:,.0f}s ({per:.1f}s per trajectory); {_waiting(client)}"
    )


def _waiting(client: LLMClient) -> str:
    """The waits summed over calls run one after another exceed the wall time: said as the
    mean wait, with the number of calls at a time that makes it."""
    stats = client.stats
    mean = stats.queued_s / stats.queued_calls if stats.queued_calls else 0.0
    return (
        f"{counted(client.max_concurrency, 'call')} at a time: a call waited "
        f"{mean:,.0f}s on average for its turn "
        f"({stats.queued_s:,.0f}s in all over {counted(stats.queued_calls, 'call')})"
    )
