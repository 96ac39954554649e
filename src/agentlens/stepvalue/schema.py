"""The `asv.v1` JSONL schema (spec §2.1): one trajectory per line, with a candidate space whose gold
id is used only for validation, and steps carrying `state_before` / `state_after`.

`load_asv` validates and converts each line to a `Problem`; `to_asv_record` writes a `Problem`
back, so coding trajectories with derived candidates can be frozen into the same schema.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
import orjson

from agentlens.bounded_read import read_named
from agentlens.errors import SchemaError
from agentlens.formats._json import iter_jsonl
from agentlens.stepvalue.model import (
    Candidate,
    EvalView,
    Problem,
    ProvidedBeliefs,
    StepCost,
    Transition,
)
from agentlens.stepvalue.permutations import physical_labels
from agentlens.stepvalue.provided import PROVIDED_FIELDS, check_provided
from agentlens.stepvalue.redaction import StringPolicy
from agentlens.stepvalue.semantic import insufficiency_id

SCHEMA = "asv.v1"
MAX_CANDIDATES = 10


class AsvCandidate(msgspec.Struct, kw_only=True):
    id: str
    text: str
    label: str | None = None
    prior: float | None = None


class AsvCandidateSpace(msgspec.Struct, kw_only=True):
    type: Literal["closed_set", "candidate_set"] = "candidate_set"
    candidates: list[AsvCandidate]
    gold_candidate_id: str


class AsvTask(msgspec.Struct, kw_only=True):
    task_id: str
    question: str
    category: str | None = None
    candidate_space: AsvCandidateSpace
    gold_visible_to_evaluator: bool = False
    gold_used_only_for_validation: bool = True


NonNegative = Annotated[int, msgspec.Meta(ge=0)]
"""A count: a negative one would make a step's cost, and so its net value, a gain."""


class AsvCost(msgspec.Struct, kw_only=True, omit_defaults=True):
    prompt_tokens: NonNegative | None = None
    completion_tokens: NonNegative | None = None
    tool_calls: NonNegative | None = None
    latency_ms: Annotated[float, msgspec.Meta(ge=0)] | None = None
    risk_score: float | None = None


class AsvStep(msgspec.Struct, kw_only=True):
    step_id: str
    index: int
    action: dict[str, Any] = msgspec.field(default_factory=dict)
    observation: Any = None
    state_before: dict[str, Any] | None = None
    state_after: dict[str, Any] | None = None
    cost: AsvCost | None = None
    belief_before: dict[str, float] | None = None
    belief_after: dict[str, float] | None = None
    raw_scores_before: dict[str, float] | None = None
    raw_scores_after: dict[str, float] | None = None


class AsvRecord(msgspec.Struct, kw_only=True):
    schema_version: str = SCHEMA
    trajectory_id: str | None = None
    task: AsvTask
    steps: list[AsvStep]
    redaction: StringPolicy = "whole"
    """AgentLens extension: `span` for states projected from coding trajectories (see
    `redaction.py`); the spec's `whole` otherwise."""


def load_asv(path: str | Path) -> list[Problem]:
    """Read and validate an `asv.v1` JSONL file; errors name the file and the line."""
    path = Path(path)
    problems = []
    for number, value in read_jsonl(path, SCHEMA):
        try:
            record = msgspec.convert(value, AsvRecord)
        except msgspec.ValidationError as exc:
            raise SchemaError(path, f"line {number}: {exc}", SCHEMA) from exc
        problems.append(_to_problem(path, number, record))
    return problems


def read_jsonl(path: Path, format: str) -> Iterator[tuple[int, Any]]:
    """`iter_jsonl` over the file's bytes; an unreadable file is a one-line `SchemaError`."""
    try:
        data = read_named(path)
    except OSError as exc:
        raise SchemaError(path, f"cannot read: {exc.strerror or exc}", format) from exc
    return iter_jsonl(path, data, format)


def _to_problem(path: Path, number: int, record: AsvRecord) -> Problem:
    _validate(path, number, record)
    space = record.task.candidate_space
    candidates = tuple(Candidate(c.id, c.text, c.prior, c.label) for c in space.candidates)
    view = EvalView(
        question=record.task.question,
        candidates=candidates,
        insufficiency_id=insufficiency_id([c.id for c in candidates]),
    )
    steps = sorted(record.steps, key=lambda s: s.index)
    return Problem(
        trajectory_id=record.trajectory_id or f"{record.task.task_id}#{number}",
        task_id=record.task.task_id,
        kind="explicit",
        view=view,
        gold_id=space.gold_candidate_id,
        transitions=tuple(_transition(step) for step in steps),
        redaction=record.redaction,
        notes={"source": f"{path}:{number}", "space_type": space.type}
        | ({"category": record.task.category} if record.task.category else {}),
    )


def _transition(step: AsvStep) -> Transition:
    """Spec §3 positions: before = state_before or {}; after = state_after plus
    `last_observation`, or, without a state_after, the observation itself."""
    after = _after_state(step.state_after, step.observation)
    step_type = step.action.get("type")
    return Transition(
        step_id=step.step_id,
        index=step.index,
        before=dict(step.state_before or {}),
        after=after,
        phase=_step_type(step_type),
        cost=StepCost(**msgspec.structs.asdict(step.cost)) if step.cost else StepCost(),
        provided=_provided(step),
    )


def _provided(step: AsvStep) -> ProvidedBeliefs | None:
    given = {name: getattr(step, name) for name in PROVIDED_FIELDS}
    return None if all(v is None for v in given.values()) else ProvidedBeliefs(**given)


def _step_type(value: Any) -> str | None:
    """The bio-agent step type as the mechanism groups spell it (§10): `validate-plan` is
    `validate_plan`; a blank type is `unknown`."""
    if not isinstance(value, str):
        return None
    return value.strip().replace("-", "_") or "unknown"


def _after_state(state_after: dict[str, Any] | None, observation: Any) -> dict[str, Any]:
    if state_after is None and isinstance(observation, dict):
        return dict(observation)
    after = dict(state_after or {})
    if observation is not None:
        after["last_observation"] = observation
    return after


def _validate(path: Path, number: int, record: AsvRecord) -> None:
    def fail(reason: str) -> SchemaError:
        return SchemaError(path, f"line {number}: {reason}", SCHEMA)

    if record.schema_version != SCHEMA:
        raise fail(f"schema_version is {record.schema_version!r}, expected {SCHEMA!r}")
    task = record.task
    space = task.candidate_space
    ids = [c.id for c in space.candidates]
    if not 2 <= len(ids) <= MAX_CANDIDATES:
        raise fail(f"needs 2 to {MAX_CANDIDATES} candidates, found {len(ids)}")
    if len(set(ids)) != len(ids):
        raise fail("candidate ids are not unique")
    labels = physical_labels([c.label for c in space.candidates])
    if any(not label.strip() or label != label.strip() for label in labels):
        raise fail("a candidate label must be a non-empty word without surrounding spaces")
    if len(set(labels)) != len(labels):
        raise fail(f"candidate labels are not unique: {labels} (unlabelled ones take A, B, C, …)")
    if space.gold_candidate_id not in ids:
        raise fail(f"gold_candidate_id {space.gold_candidate_id!r} is not a candidate id")
    if task.gold_visible_to_evaluator:
        raise fail("gold_visible_to_evaluator must be false: the evaluator never sees the gold")
    if not record.steps:
        raise fail("no steps")
    for step in record.steps:
        check_provided(step.step_id, {n: getattr(step, n) for n in PROVIDED_FIELDS}, set(ids), fail)


def to_asv_record(problem: Problem) -> dict[str, Any]:
    """The `asv.v1` line for a problem (states as projected, observation folded into the after state)."""
    candidates = [
        {"id": c.id, "text": c.text}
        | ({"prior": c.prior} if c.prior is not None else {})
        | ({"label": c.label} if c.label is not None else {})
        for c in problem.view.candidates
    ]
    return {
        "schema_version": SCHEMA,
        "trajectory_id": problem.trajectory_id,
        "task": {
            "task_id": problem.task_id,
            "question": problem.view.question,
            **({"category": problem.notes["category"]} if problem.notes.get("category") else {}),
            "candidate_space": {
                "type": "candidate_set",
                "candidates": candidates,
                "gold_candidate_id": problem.gold_id,
            },
            "gold_visible_to_evaluator": False,
            "gold_used_only_for_validation": True,
        },
        "steps": [_step_record(t) for t in problem.transitions],
    } | ({"redaction": problem.redaction} if problem.redaction != "whole" else {})


def _step_record(t: Transition) -> dict[str, Any]:
    after = dict(t.after)
    observation = after.pop("last_observation", None)
    record: dict[str, Any] = {
        "step_id": t.step_id,
        "index": t.index,
        "action": {"type": t.phase} if t.phase else {},
        "state_before": t.before,
        "state_after": after,
    }
    if observation is not None:
        record["observation"] = observation
    cost = {k: v for k, v in asdict(t.cost).items() if v is not None}
    if cost:
        record["cost"] = cost
    if t.provided is not None:
        record |= {k: v for k, v in asdict(t.provided).items() if v is not None}
    return record


def write_asv(problems: list[Problem], path: str | Path) -> None:
    """Write problems as `asv.v1` JSONL."""
    with open(path, "wb") as out:
        for problem in problems:
            out.write(orjson.dumps(to_asv_record(problem)) + b"\n")
