"""Run side-by-side reviews of two runs on their common pair keys (spec §8) with order-swapped
replay (spec §9): each pair × dimension is judged with run A as Agent 1, and again with the order
swapped. The swapped score is sign-flipped back to A-vs-B orientation; the cell's score is the
mean of the available orders, and the position-consistency rate is the share of cells (both
orders scored) whose two signs agree. Pitfalls scores come from the burden totals (spec §6).
Pairs are built by `pairing.pair_runs` (repeat i of a task in A vs repeat i in B); the
permutation test reads each pair as one paired difference, or each task's mean over its pairs
with `pairing="task-mean"`. With `samples` N > 1 each order is judged N times (`sample_ci`).
Where the backend can constrain answers to a schema, each answer is the JSON of
`sxs.structured` (asked once more after one without a valid score); else the tagged format."""

from __future__ import annotations

import asyncio
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from agentlens.errors import ConfigError
from agentlens.providers import ChatRequest, LLMClient
from agentlens.reviews import DIMENSIONS, canonical_order
from agentlens.reviews.judge.ask import (
    Asked,
    PerItem,
    ask_scored,
    dimensions_of,
    sample_request,
    sampling_temperature,
)
from agentlens.reviews.judge.judge import DimensionReview
from agentlens.reviews.judge.samples import ItemSamples
from agentlens.reviews.sxs.alert import llm_judge_alert
from agentlens.reviews.sxs.cell import Cell
from agentlens.reviews.sxs.mapping import PitfallScore, pitfalls_score
from agentlens.reviews.sxs.pairing import PAIRINGS, Side, key_order, pair_task
from agentlens.reviews.sxs.parse import ParsedComparison, parse_comparison
from agentlens.reviews.sxs.prompt import Presence, build_messages, has_review
from agentlens.reviews.sxs.sample_ci import SampleCi, sample_ci
from agentlens.reviews.sxs.stats import (
    ScoreFlags,
    Ties,
    TrinomialProfile,
    TrinomialResult,
    score_flags,
    trinomial_from_scores,
)
from agentlens.reviews.sxs.structured import (
    pairwise_reask,
    pairwise_schema,
    pairwise_token_bound,
    parse_pairwise,
)

MAX_POOL = 50

PairDimensions = PerItem[str]


def select_tasks(
    a: Side, b: Side, dimensions: PairDimensions, presence: Presence = "scored"
) -> list[str]:
    """Spec §8.4 on pair keys: common keys with a dimension to judge; complete ones (a review
    for each of the key's dimensions on both sides) first; each group shuffled with one
    Random(42); cut to 50; sorted (`t#2` < `t#10`)."""
    dims_of = dimensions_of(dimensions)
    common = [
        k for k in sorted(set(a.trajectories) & set(b.trajectories), key=key_order) if dims_of(k)
    ]

    def complete(key: str) -> bool:
        sides = (a.reviews.get(key), b.reviews.get(key))
        return all(
            s is not None and all(has_review(s.reviews.get(d), presence) for d in dims_of(key))
            for s in sides
        )

    rng = random.Random(42)
    full = [k for k in common if complete(k)]
    rest = [k for k in common if not complete(k)]
    rng.shuffle(full)
    rng.shuffle(rest)
    return sorted((full + rest)[:MAX_POOL], key=key_order)


@dataclass(frozen=True)
class Sampling:
    """How many times each order is judged, and at what temperature (None: 0 for one answer,
    0.7 for N > 1, as `ask.sampling_temperature` says)."""

    n: int = 1
    temperature: float | None = None

    @property
    def request_temperature(self) -> float:
        """What every request of both orders states: were it left to the backend's default
        (llama.cpp 0.8, OpenAI 1.0), the order-swap check would partly measure sampling noise."""
        return sampling_temperature(self.temperature, self.n)


async def _judge(
    client: LLMClient,
    messages: list[dict[str, str]],
    max_tokens: int,
    sampling: Sampling,
    structured: bool,
    dimension: str,
    score_fixed: bool = False,
) -> list[ParsedComparison]:
    """One order's answers: one, or N samples (seed 42 + k); a schema answer without a valid
    score is asked once more, unless the Pitfalls mapping fixes the score (`score_fixed`): then
    only one that is no JSON object is, as the rest of it still feeds the judge alert."""
    request = ChatRequest(
        messages=messages,
        temperature=sampling.request_temperature,
        max_tokens=max(max_tokens, pairwise_token_bound()) if structured else max_tokens,
        seed=42,
        json_schema=pairwise_schema() if structured else None,
    )
    if sampling.n > 1:
        requests = [sample_request(request, k, request.temperature) for k in range(sampling.n)]
    else:
        requests = [request]
    parse = parse_pairwise if structured else parse_comparison
    follow_up = partial(pairwise_reask, dimension=dimension) if structured else None
    settled = _usable_beside_a_fixed_score if score_fixed else None
    answers = await asyncio.gather(
        *(ask_scored(client, r, parse, follow_up, settled) for r in requests)
    )
    return [_comparison(a) for a in answers]


def _usable_beside_a_fixed_score(parsed: ParsedComparison) -> bool:
    return parsed.score is not None or not parsed.malformed


def _comparison(asked: Asked[ParsedComparison]) -> ParsedComparison:
    if asked.failure is not None or asked.parsed is None:
        return ParsedComparison(None, f"provider error: {asked.failure}", "", [], asked.attempts)
    asked.parsed.attempts = asked.attempts
    return asked.parsed


def _review(side: Side, task: str, dim: str) -> DimensionReview | None:
    review = side.reviews.get(task)
    return review.reviews.get(dim) if review else None


def _burden(review: DimensionReview | None) -> int | None:
    """The review's burden: from its pitfall lines, else its stated `BurdenTotal` (a clean run
    lists no pitfalls and states 0; spec §6), else unknown."""
    if review is None or review.parsed is None:
        return None
    parsed = review.parsed
    return parsed.burden_total if parsed.burden_total is not None else parsed.stated_burden_total


def _pitfall_mapping(a: DimensionReview | None, b: DimensionReview | None) -> PitfallScore | None:
    total_a, total_b = _burden(a), _burden(b)
    if total_a is None or total_b is None:
        return None
    return pitfalls_score(total_a, total_b)


async def judge_cell(
    client: LLMClient,
    a: Side,
    b: Side,
    task: str,
    dim: str,
    *,
    swap: bool,
    budget_tokens: int,
    max_tokens: int,
    presence: Presence = "scored",
    sampling: Sampling | None = None,
    structured: bool = False,
) -> Cell:
    sampling = sampling or Sampling()
    ra, rb = _review(a, task, dim), _review(b, task, dim)
    ta, tb = a.trajectories[task], b.trajectories[task]
    mapping = _pitfall_mapping(ra, rb) if dim == "Pitfalls" else None
    prompt = partial(
        build_messages, dim, budget_tokens=budget_tokens, presence=presence, structured=structured
    )
    calls = [prompt(ta, tb, ra, rb, pitfalls=mapping)]
    if swap:
        swapped_map = pitfalls_score(mapping.total_2, mapping.total_1) if mapping else None
        calls.append(prompt(tb, ta, rb, ra, pitfalls=swapped_map))
    orders = await asyncio.gather(
        *(
            _judge(client, m, max_tokens, sampling, structured, dim, mapping is not None)
            for m in calls
        )
    )
    # A swapped answer is sign-flipped back to A-vs-B; a Pitfalls score is the mapping's, fixed.
    oriented = [
        [mapping.score if mapping else _flip(p.score, flip=i == 1) for p in order]
        for i, order in enumerate(orders)
    ]
    primaries = [_primary(order) for order in orders]
    scores = [oriented[i][orders[i].index(p)] for i, p in enumerate(primaries)]
    samples = tuple(ItemSamples(tuple(o)) for o in oriented) if sampling.n > 1 else ()
    forward, swapped = scores[0], scores[1] if swap else None
    return Cell(task, dim, forward, swapped, mapping, primaries, (ta.id, tb.id), samples)


def _flip(score: int | None, *, flip: bool) -> int | None:
    return -score if flip and score is not None else score


def _primary(order: list[ParsedComparison]) -> ParsedComparison:
    """The answer an order reports: its first scored sample, else its first."""
    return next((p for p in order if p.score is not None), order[0])


@dataclass
class DimensionResult:
    dimension: str
    cells: list[Cell]
    flags: ScoreFlags
    judge_alert: bool
    pairing: str = "repeat"
    judge_alert_reason: str = "rule: an aspect with the same winner in ≥ 3 comparisons, one high"
    trinomial: TrinomialResult | None = None  # reported beside `flags`, never part of them
    samples: SampleCi | None = None  # with N > 1 samples: the mean score's CI, and agreement

    @property
    def consistency_rate(self) -> float | None:
        both = [c.consistent for c in self.cells if c.consistent is not None]
        return round(sum(both) / len(both), 4) if both else None

    @property
    def alert(self) -> bool:
        return self.flags.alert and self.judge_alert

    @property
    def warning(self) -> bool:
        return self.flags.alert or self.judge_alert

    @property
    def reason(self) -> str:
        """The score flags' arithmetic, then how spec §8 turns them and the judge alert into the
        final flags (a score warning alone flags nothing)."""
        said = {True: "yes", False: "no"}
        return (
            f"{self.flags.reason}; so score warning {said[self.flags.warning]}, score alert "
            f"{said[self.flags.alert]}, judge alert {said[self.judge_alert]} → warning = score "
            f"alert or judge alert = {said[self.warning]}, alert = score alert and judge alert = "
            f"{said[self.alert]} (spec §8)"
        )

    def to_dict(self) -> dict[str, Any]:
        scored = [c for c in self.cells if c.score is not None]
        # with nothing scored the test's mean 0 and p 1 would read as "no change"
        return {
            "mean_score": self.flags.mean if scored else None,
            "p_value": self.flags.p_value if scored else None,
            "trinomial": self.trinomial.to_dict() if self.trinomial else None,
            "pairing": self.pairing,
            "paired_differences": sum(
                d is not None for d in paired_differences(self.cells, self.pairing)
            ),
            "tasks": len(self.cells),
            "scored_tasks": len(scored),
            "unscored_rate": round(1 - len(scored) / len(self.cells), 4) if self.cells else 0.0,
            "position_consistency_rate": self.consistency_rate,
            "score_warning": self.flags.warning,
            "score_alert": self.flags.alert,
            "judge_alert": self.judge_alert,
            "judge_alert_reason": self.judge_alert_reason,
            "warning": self.warning,
            "alert": self.alert,
            "reason": self.reason,
            **({"samples": self.samples.to_dict()} if self.samples else {}),
            "cells": [
                {
                    "task": c.task,
                    "trajectory_a": c.trajectories[0],
                    "trajectory_b": c.trajectories[1],
                    "forward": c.forward,
                    "swapped": c.swapped,
                    "score": c.score,
                    "consistent": c.consistent,
                    "pitfalls": c.pitfalls.line if c.pitfalls else None,
                    **({"samples": [list(o.scores) for o in c.samples]} if c.samples else {}),
                    "comparisons": [
                        {
                            "score": p.score,
                            "unscored_reason": p.unscored_reason,
                            "attempts": p.attempts,
                            "lines": [vars(x) for x in p.lines],
                        }
                        for p in c.comparisons
                    ],
                }
                for c in self.cells
            ],
        }


def paired_differences(cells: Sequence[Cell], pairing: str = "repeat") -> list[float | None]:
    """The permutation test's input, score/5 per cell (`repeat`) or per task, averaged over the
    task's scored pairs (`task-mean`); None where nothing was scored."""
    if pairing == "repeat":
        return [c.score / 5 if c.score is not None else None for c in cells]
    by_task: dict[str, list[float]] = {}
    for cell in cells:
        scores = by_task.setdefault(pair_task(cell.task), [])
        if cell.score is not None:
            scores.append(cell.score / 5)
    return [sum(s) / len(s) if s else None for s in by_task.values()]


def judge_alert(cells: Sequence[Cell]) -> bool:
    """Deterministic stand-in for the spec's LLM summary: some aspect (normalised name) has the
    same non-Tie winner in ≥ 3 comparisons and at least one of them is of high severity. A
    comparison counts once per aspect, however many of its lines repeat that aspect."""
    groups: Counter[tuple[str, str]] = Counter()
    high: set[tuple[str, str]] = set()
    for cell in cells:
        for parsed in cell.comparisons[:1]:  # forward order only, so swaps do not double count
            winners = [line for line in parsed.lines if line.winner in ("A1", "A2")]
            keys = {_aspect_key(line.aspect, line.winner) for line in winners}
            groups.update(keys)
            high.update(_aspect_key(x.aspect, x.winner) for x in winners if x.severity == "high")
    return any(n >= 3 and key in high for key, n in groups.items())


def _aspect_key(aspect: str, winner: str | None) -> tuple[str, str]:
    return " ".join(re.findall(r"[a-z]+", aspect.lower())[:3]), winner or ""


async def run_sxs(
    client: LLMClient,
    a: Side,
    b: Side,
    *,
    dimensions: PairDimensions = DIMENSIONS,
    swap: bool = True,
    budget_tokens: int = 4000,
    max_tokens: int = 500,
    pairing: str = "repeat",
    ties: Ties = "tolerant",
    llm_alert: bool = False,
    presence: Presence = "scored",
    trinomial_profile: TrinomialProfile = "default",
    sampling: Sampling | None = None,
    structured: bool | None = None,
) -> dict[str, DimensionResult]:
    """SxS per dimension. `ties="released"`, `llm_alert=True` and `presence="text"` reproduce the
    released evaluator's permutation p, its LLM-summarised judge alert and its notion of a present
    review (selection and prompt) (`sxs --profile released`); `trinomial_profile="released"` its
    trinomial test's float ties and −1 above N = 500. The trinomial test reads the permutation
    test's input and is only reported: no flag depends on it. With `dimensions` a function of
    the pair key, each dimension is judged on the selected keys that have it, and one no
    selected key has is absent from the result. `sampling`: each order judged N times; the
    result carries the samples, their agreement and the mean score's CI (`sample_ci`).
    `structured`: ask for the JSON answer of `sxs.structured`; None: wherever the backend can
    constrain answers to a schema (else the tagged format and its parser)."""
    if pairing not in PAIRINGS:
        raise ConfigError(f"unknown pairing {pairing!r}; choose one of {PAIRINGS}")
    tasks = select_tasks(a, b, dimensions, presence)
    dims_of = dimensions_of(dimensions)
    judged = _judged_dimensions(dimensions, tasks)
    schema = client.supports_json_schema if structured is None else structured
    jobs = [
        judge_cell(
            client,
            a,
            b,
            t,
            d,
            swap=swap,
            budget_tokens=budget_tokens,
            max_tokens=max_tokens,
            presence=presence,
            sampling=sampling,
            structured=schema,
        )
        for d in judged
        for t in tasks
        if d in dims_of(t)
    ]
    cells = await asyncio.gather(*jobs)
    out = {}
    for dim in judged:
        mine = [c for c in cells if c.dimension == dim]
        differences = paired_differences(mine, pairing)
        flags = score_flags(differences, ties)
        trinomial = trinomial_from_scores(differences, trinomial_profile)
        out[dim] = DimensionResult(
            dim, mine, flags, judge_alert(mine), pairing, trinomial=trinomial,
            samples=sample_ci(mine, pairing, flags.mean),
        )  # fmt: skip
        if llm_alert:
            forward = [c for c in mine if c.comparisons]
            alert = await llm_judge_alert(
                client, dim, [c.task for c in forward], [c.comparisons[0] for c in forward]
            )
            out[dim].judge_alert, out[dim].judge_alert_reason = alert.alert, alert.reason
    return out


def _judged_dimensions(dimensions: PairDimensions, tasks: Sequence[str]) -> list[str]:
    """A fixed list as given (even with no task); else those of some task, in canonical order."""
    if not callable(dimensions):
        return list(dimensions)
    return canonical_order({d for t in tasks for d in dimensions(t)})
