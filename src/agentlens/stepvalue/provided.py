"""Provided beliefs: score an `asv.v1` file whose steps already carry `belief_before/after` and/or
`raw_scores_before/after` (spec §2.1), without an evaluator, as the released tool's default
`provided-belief` mode does (`agentlens stepvalue --evaluator provided`).

Beliefs drive ΔH, S and the gold log-likelihood; the gold margin is read on the raw scores (spec
§6.3), or on log b when only beliefs are given (the same margin when b = softmax(s): the softmax
constant cancels; b is floored at ε_gold = 1e-12 there, as the oracle gain is, so a one-hot belief
gives a finite margin). A side with raw scores only takes b = softmax(s). Rows carry the channel
`provided`, one labelling (no permutations, so no anisotropy), and no floor.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from agentlens.errors import ConfigError
from agentlens.stepvalue.belief import Belief, softmax
from agentlens.stepvalue.config import Costs, RunConfig
from agentlens.stepvalue.evaluate import StepValueResult, add_channel_effects
from agentlens.stepvalue.metrics import GOLD_FLOOR
from agentlens.stepvalue.model import Problem, ProvidedBeliefs
from agentlens.stepvalue.phases import phase_aggregates
from agentlens.stepvalue.projection import render_state, state_hash
from agentlens.stepvalue.results import add_net, belief_values, row_head

PROVIDED = "provided"
PROVIDED_FIELDS = ("belief_before", "belief_after", "raw_scores_before", "raw_scores_after")


def check_provided(
    step_id: str,
    given: dict[str, dict[str, float] | None],
    ids: set[str],
    fail: Callable[[str], Exception],
) -> None:
    """Provided beliefs/raw scores name exactly the candidates, for both ends of the step."""
    if all(v is None for v in given.values()):
        return
    for side in ("before", "after"):
        if given[f"belief_{side}"] is None and given[f"raw_scores_{side}"] is None:
            raise fail(f"step {step_id}: belief_{side} or raw_scores_{side} is missing")
    for name, values in given.items():
        if values is not None and set(values) != ids:
            raise fail(f"step {step_id}: {name} must give every candidate id, {sorted(ids)}")
        if name.startswith("belief") and values and not _is_belief(values):
            raise fail(f"step {step_id}: {name} must be non-negative with a positive sum")


def _is_belief(values: dict[str, float]) -> bool:
    return min(values.values()) >= 0 and sum(values.values()) > 0


def provided_belief(probs: dict[str, float] | None, raw: dict[str, float] | None) -> Belief:
    """One side's belief: probabilities as given (normalised), scores = raw scores or log b."""
    if probs is not None:
        ids = sorted(probs)
        total = sum(float(probs[c]) for c in ids)
        norm = [float(probs[c]) / total for c in ids]
    else:
        assert raw is not None
        ids = sorted(raw)
        norm = softmax([float(raw[c]) for c in ids])
    if raw is not None:
        scores = [float(raw[c]) for c in ids]
    else:
        scores = [math.log(max(p, GOLD_FLOOR)) for p in norm]
    return Belief(
        candidate_ids=tuple(ids),
        scores=tuple(scores),
        probs=tuple(norm),
        sources=(PROVIDED,) * len(ids),
        raw=tuple((s,) for s in scores),
    )


def sides(provided: ProvidedBeliefs) -> tuple[Belief, Belief]:
    return (
        provided_belief(provided.belief_before, provided.raw_scores_before),
        provided_belief(provided.belief_after, provided.raw_scores_after),
    )


def evaluate_provided(problems: Sequence[Problem], config: RunConfig) -> StepValueResult:
    """Rows, phases and sensitivity tables from the beliefs the records carry (no LLM call)."""
    lacking = [p.trajectory_id for p in problems if any(t.provided is None for t in p.transitions)]
    if lacking or not problems:
        raise ConfigError(
            f"--evaluator provided needs belief_before/after or raw_scores_before/after on every "
            f"step of an asv.v1 file; {lacking[0] if lacking else 'no trajectory'} lacks them"
        )
    steps = [row for p in problems for row in _rows(p, config)]
    add_channel_effects(steps)
    costs = Costs(transitions=len(steps))
    result = StepValueResult(PROVIDED, config, list(problems), steps, [], costs)
    result.phases = phase_aggregates(steps)
    return result


def _rows(problem: Problem, config: RunConfig) -> list[dict[str, Any]]:
    rows = []
    for t in problem.transitions:
        assert t.provided is not None
        before, after = sides(t.provided)
        hashes = (
            state_hash(render_state(t.before, policy=problem.redaction)),
            state_hash(render_state(t.after, policy=problem.redaction)),
        )
        row = row_head(problem, t, PROVIDED, "full", hashes)
        row |= {"missing": False, "flags": [], "provided": True}
        row |= belief_values([before], [after], problem.gold_id, config.epsilon)
        add_net(row, t, config)
        rows.append(row)
    return rows
