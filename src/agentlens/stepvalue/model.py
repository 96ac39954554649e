"""The value problem every candidate source produces: a question, a candidate set with a gold id
kept away from the evaluator, and the transitions (state before, state after) of one trajectory."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from agentlens.stepvalue.redaction import StringPolicy

ProblemKind = Literal["explicit", "fault-localisation", "outcome"]


@dataclass(frozen=True)
class Candidate:
    """One candidate outcome, shown to the evaluator by its stable `id` and `text` only."""

    id: str
    text: str
    prior: float | None = None
    label: str | None = None
    """The physical option label an asv.v1 record gives it (spec §2.1); None = A, B, C, … by
    position (or 1, 2, 3, … with the numeric scheme)."""


@dataclass(frozen=True)
class StepCost:
    """What one agent step cost (spec §2.1 `cost`); None = the trajectory does not record it."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    tool_calls: int | None = None
    latency_ms: float | None = None
    risk_score: float | None = None


@dataclass(frozen=True)
class ProvidedBeliefs:
    """Beliefs and raw scores an asv.v1 step already carries (spec §2.1), keyed by candidate id;
    scored without an evaluator (the released tool's `provided-belief` mode)."""

    belief_before: dict[str, float] | None = None
    belief_after: dict[str, float] | None = None
    raw_scores_before: dict[str, float] | None = None
    raw_scores_after: dict[str, float] | None = None


@dataclass(frozen=True)
class Transition:
    """One agent step: the raw (unredacted) state dicts before and after it.

    `phase` is the process phase (coding trajectories) or the step type (open-QA schema).
    """

    step_id: str
    index: int
    before: dict[str, Any]
    after: dict[str, Any]
    phase: str | None = None
    cost: StepCost = field(default_factory=StepCost)
    provided: ProvidedBeliefs | None = None


@dataclass(frozen=True)
class EvalView:
    """What the evaluator may see about the task: never the gold id."""

    question: str
    candidates: tuple[Candidate, ...]
    insufficiency_id: str | None = None


@dataclass(frozen=True)
class Problem:
    """A trajectory ready for step-value scoring."""

    trajectory_id: str
    task_id: str
    kind: ProblemKind
    view: EvalView
    gold_id: str
    transitions: tuple[Transition, ...]
    redaction: StringPolicy = "whole"
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def candidate_ids(self) -> list[str]:
        return [c.id for c in self.view.candidates]
