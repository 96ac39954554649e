"""Open-QA task rows (spec §2.2) joined with trajectories into `asv.v1` records: the
`agentlens stepvalue adapt-open-qa` command (the released tool's `asv adapt-open-qa`).

A row is accepted only when it is reviewed and frozen: `review.status` is `approved` or
`accepted` (case-insensitive); anything else (`pending`, `rejected`, missing) is refused, because
the spec freezes the human-reviewed candidates before any scoring. A row has exactly four
`candidate_answers` with unique, non-empty ids and texts, exactly one of which is the
`none-of-the-above` candidate with the spec's exact text, and a `gold_candidate_id` among them.

A row joins the trajectory whose id, or whose file name without its extension, equals the row's
`trajectory_id`. The steps are projected like any trajectory AgentLens reads (spec §3 and
decision §13.7), each with its real token, tool-call and latency cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentlens.errors import ConfigError, SchemaError
from agentlens.stepvalue.candidates.coding import coding_transitions
from agentlens.stepvalue.model import Candidate, EvalView, Problem
from agentlens.stepvalue.schema import read_jsonl
from agentlens.stepvalue.semantic import OPEN_QA_INSUFFICIENCY
from agentlens.trajectory import Trajectory

FORMAT = "open-qa task"
CANDIDATE_COUNT = 4
INSUFFICIENCY_TEXT = (
    "The available evidence is insufficient to support any of the specific candidate answers."
)
APPROVED = ("approved", "accepted")


@dataclass(frozen=True)
class OpenQaTask:
    trajectory_id: str
    question: str
    category: str | None
    candidates: tuple[Candidate, ...]
    gold_id: str
    review: dict[str, Any]
    line: int


def load_tasks(path: str | Path) -> list[OpenQaTask]:
    """Read and validate reviewed open-QA rows; an error names the file, the line and the fix."""
    path = Path(path)
    tasks: list[OpenQaTask] = []
    seen: dict[str, int] = {}
    for number, value in read_jsonl(path, FORMAT):
        task = _task(path, number, value)
        if task.trajectory_id in seen:
            raise _fail(
                path,
                number,
                f"trajectory_id {task.trajectory_id!r} already used on line {seen[task.trajectory_id]}",
            )
        seen[task.trajectory_id] = number
        tasks.append(task)
    return tasks


def _fail(path: Path, number: int, reason: str) -> SchemaError:
    return SchemaError(path, f"line {number}: {reason}", FORMAT)


def _text(path: Path, number: int, row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    if not isinstance(value, str) or not value.strip():
        raise _fail(path, number, f"{key} must be a non-empty string")
    return value


def _task(path: Path, number: int, row: Any) -> OpenQaTask:
    if not isinstance(row, dict):
        raise _fail(path, number, f"a task row must be a JSON object, found {type(row).__name__}")
    trajectory_id = _text(path, number, row, "trajectory_id")
    question = _text(path, number, row, "question")
    category = row.get("category")
    if category is not None and not isinstance(category, str):
        raise _fail(path, number, "category must be a string")
    candidates = _candidates(path, number, row.get("candidate_answers"))
    gold = row.get("gold_candidate_id")
    ids = [c.id for c in candidates]
    if gold not in ids:
        raise _fail(path, number, f"gold_candidate_id {gold!r} is not one of {ids}")
    return OpenQaTask(
        trajectory_id, question, category, candidates, gold, _review(path, number, row), number
    )


def _candidates(path: Path, number: int, raw: Any) -> tuple[Candidate, ...]:
    if not isinstance(raw, list) or len(raw) != CANDIDATE_COUNT:
        found = len(raw) if isinstance(raw, list) else type(raw).__name__
        raise _fail(
            path, number, f"candidate_answers must list {CANDIDATE_COUNT} answers, found {found}"
        )
    candidates = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or not all(
            isinstance(item.get(k), str) and item[k].strip() for k in ("id", "text")
        ):
            raise _fail(path, number, f"candidate_answers[{i}] needs a non-empty id and text")
        candidates.append(Candidate(item["id"], item["text"]))
    ids = [c.id for c in candidates]
    if len(set(ids)) != len(ids):
        raise _fail(path, number, f"candidate ids are not unique: {ids}")
    nota = [c for c in candidates if c.id == OPEN_QA_INSUFFICIENCY]
    if len(nota) != 1:
        raise _fail(path, number, f"exactly one candidate must have id {OPEN_QA_INSUFFICIENCY!r}")
    if nota[0].text != INSUFFICIENCY_TEXT:
        raise _fail(
            path,
            number,
            f"the {OPEN_QA_INSUFFICIENCY!r} text must be exactly {INSUFFICIENCY_TEXT!r}",
        )
    if any(c.text == INSUFFICIENCY_TEXT for c in candidates if c.id != OPEN_QA_INSUFFICIENCY):
        raise _fail(path, number, "only none-of-the-above may carry the insufficiency text")
    return tuple(candidates)


def _review(path: Path, number: int, row: dict[str, Any]) -> dict[str, Any]:
    review = row.get("review")
    status = review.get("status") if isinstance(review, dict) else None
    if not isinstance(status, str) or status.strip().lower() not in APPROVED:
        raise _fail(
            path,
            number,
            f"review.status is {status!r}: only rows reviewed as approved or accepted are frozen "
            "for scoring",
        )
    assert isinstance(review, dict)
    return review


def join(
    tasks: Sequence[OpenQaTask],
    trajectories: Sequence[Trajectory],
    *,
    tasks_path: str | Path,
    max_steps: int | None = None,
    skip_missing: bool = False,
) -> tuple[list[Problem], list[OpenQaTask]]:
    """Problems for the rows whose trajectory was read; the rows left out (only with
    `skip_missing`, otherwise a missing trajectory is an error)."""
    by_key: dict[str, Trajectory] = {}
    for traj in trajectories:
        by_key.setdefault(traj.id, traj)
        if traj.source.path:
            by_key.setdefault(Path(traj.source.path).name.split(".")[0], traj)
    problems: list[Problem] = []
    missing: list[OpenQaTask] = []
    for task in tasks:
        found = by_key.get(task.trajectory_id)
        if found is None:
            if not skip_missing:
                raise ConfigError(
                    f"{tasks_path} line {task.line}: trajectory {task.trajectory_id!r} is not "
                    f"among the {len(trajectories)} trajectories read (match by trajectory id "
                    "or file name; --skip-missing leaves such rows out)"
                )
            missing.append(task)
            continue
        problems.append(_problem(task, found, max_steps))
    return problems, missing


def _problem(task: OpenQaTask, traj: Trajectory, max_steps: int | None) -> Problem:
    transitions = coding_transitions(traj, max_steps=max_steps)
    if not transitions:
        raise ConfigError(
            f"{traj.source.path or traj.id}: no agent steps to score for task row "
            f"{task.trajectory_id!r}"
        )
    notes: dict[str, Any] = {"source": traj.source.path, "review": task.review}
    if task.category:
        notes["category"] = task.category
    return Problem(
        trajectory_id=task.trajectory_id,
        task_id=task.trajectory_id,
        kind="explicit",
        view=EvalView(task.question, task.candidates, OPEN_QA_INSUFFICIENCY),
        gold_id=task.gold_id,
        transitions=transitions,
        redaction="span",
        notes=notes,
    )
