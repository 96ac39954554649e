"""`agentlens stepvalue` as asked for on the command line: the run settings from its options, the
evaluation (an evaluator LLM, or `provided`: the beliefs an asv.v1 file carries) and the line
that says what the work cost."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentlens.list_text import counted
from agentlens.providers import get_provider
from agentlens.providers.registry import is_local
from agentlens.stepvalue.config import RunConfig
from agentlens.stepvalue.cost import finite_lambda, parse_weights
from agentlens.stepvalue.evaluate import StepValueResult, evaluate
from agentlens.stepvalue.model import Problem
from agentlens.stepvalue.provided import PROVIDED, evaluate_provided


@dataclass(frozen=True)
class EvaluateRequest:
    evaluator: str
    channels: str
    permutations: int
    slices: str
    rationale_tokens: int | None
    leak_policy: str
    label_scheme: str
    direct_layout: str
    fallback_policy: str
    concurrency: int | None
    audit_n: int
    lam: float
    cost_weights: str
    no_cache: bool

    def config(self) -> RunConfig:
        """The run settings, checked; comma lists split, states in flight 1 for a local
        evaluator and 4 for a remote one unless given."""
        settings: dict[str, Any] = {
            "leak_policy": self.leak_policy,
            "fallback_policy": self.fallback_policy,
            "label_scheme": self.label_scheme,
            "direct_layout": self.direct_layout,
            "slices": _csv(self.slices),
        }
        config = RunConfig(
            channels=_csv(self.channels),
            permutations=self.permutations,
            rationale_tokens=self.rationale_tokens,
            concurrency=self.concurrency or (1 if is_local(self.evaluator) else 4),
            lam=finite_lambda(self.lam),
            cost_weights=parse_weights(self.cost_weights),
            **settings,
        )
        config.validate()
        return config


def evaluate_request(
    request: EvaluateRequest, problems: Sequence[Problem], config: RunConfig
) -> StepValueResult:
    if request.evaluator == PROVIDED:  # the asv.v1 steps carry their beliefs: no LLM call
        return evaluate_provided(problems, config)
    client = get_provider(request.evaluator, role="evaluator", cache=not request.no_cache)
    return evaluate(list(problems), client, config, audit_n=request.audit_n)


def work_done(result: StepValueResult, evaluator: str) -> str:
    c = result.costs
    calls = counted(c.evaluator_calls, "evaluator call")
    work = (
        "scored from the beliefs the file carries (no evaluator calls)"
        if evaluator == PROVIDED
        else f"{counted(c.distinct_states, 'state')}: {calls} (naive {c.naive_calls}), "
        f"{c.wall_s:.1f} s"
    )
    done = f"{counted(len(result.problems), 'trajectory')}, {counted(c.transitions, 'transition')}"
    return f"{done}, {work}"


def _csv(value: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(",") if v.strip())
