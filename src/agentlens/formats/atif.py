"""ATIF v1.0-v1.8 (Harbor `trajectory.json`): validated, then mapped to the canonical model.

Steps are mapped by `_atif_steps` (one canonical step per tool call; see there).
A non-conformant file raises `SchemaError`; `lenient=True` reads it best-effort, also accepting
the common look-alike shape (`tool_calls[{id, name}]`, tool results as separate system steps).
The verdict is not in the file: a Harbor trial `result.json` two levels up supplies it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import orjson

from agentlens.errors import SchemaError
from agentlens.formats._atif_steps import atif_steps, carried, message_text
from agentlens.formats._json import head_text, loads
from agentlens.formats.atif_schema import validate
from agentlens.trajectory import (
    Agent,
    Outcome,
    OutcomeStatus,
    Source,
    Step,
    Trajectory,
    Usage,
)

SHOWN_PROBLEMS = 3


class AtifReader:
    name: ClassVar[str] = "atif"

    def __init__(self, *, lenient: bool = False) -> None:
        self.lenient = lenient

    @classmethod
    def handles_location(cls, path: Path) -> bool:
        return path.suffix == ".json"

    @classmethod
    def handles_bytes(cls, head: bytes) -> bool:
        text = head_text(head[:4096])
        if not text.startswith("{") or '"schema_version"' not in text:
            return False
        return '"ATIF-v' in text or ('"steps"' in text and '"step_id"' in head_text(head))

    def read(self, path: Path, data: bytes) -> Iterator[Trajectory]:
        doc = loads(path, data, self.name)
        problems = validate(doc)
        if problems and not self.lenient:
            shown = "; ".join(problems[:SHOWN_PROBLEMS])
            more = (
                f" (+{len(problems) - SHOWN_PROBLEMS} more)"
                if len(problems) > SHOWN_PROBLEMS
                else ""
            )
            raise SchemaError(
                path,
                f"not conformant ATIF: {shown}{more}; use --lenient to read it best-effort",
                self.name,
            )
        if not isinstance(doc, dict) or not isinstance(doc.get("steps"), list):
            raise SchemaError(path, "no 'steps' list, even read leniently", self.name)
        trajectory = to_trajectory(doc, path)
        if problems:
            trajectory.metadata["schema_problems"] = problems
        yield trajectory


def to_trajectory(
    doc: dict[str, Any], path: Path, parent_id: str | None = None, *, follow_refs: bool = True
) -> Trajectory:
    """Map one (already validated or leniently accepted) ATIF document to a `Trajectory`.

    Sub-agents come from `subagent_trajectories` (embedded) and, with `follow_refs`, from the
    valid sibling files that `subagent_trajectory_ref.trajectory_path` names (one level deep).
    """
    agent = doc.get("agent") or {}
    ours = carried(doc)
    steps = atif_steps(doc["steps"])
    own_id = _id(doc, path)
    subs = [to_trajectory(s, path, own_id) for s in doc.get("subagent_trajectories") or []]
    subs += _referenced(doc, path, own_id) if follow_refs else []
    parent_id = parent_id or (agent.get("extra") or {}).get("parent_session_id")
    outcome, task_id = _trial_result(path)
    return Trajectory(
        id=own_id,
        task_id=ours.get("task_id") or task_id,
        task=ours.get("task") or _task(doc["steps"]),
        agent=Agent(name=agent.get("name"), version=agent.get("version")),
        model=agent.get("model_name") or agent.get("model") or _first_model(steps),
        outcome=_outcome(ours.get("outcome")) or outcome or Outcome(),
        source=Source(format="atif", path=str(path), format_version=doc.get("schema_version")),
        steps=steps,
        reported_usage=_final_usage(doc.get("final_metrics")),
        reported_cost=(doc.get("final_metrics") or {}).get("total_cost_usd"),
        parent_id=parent_id,
        subtrajectories=subs,
        metadata=_metadata(doc),
    )


def _referenced(doc: dict[str, Any], path: Path, parent_id: str) -> list[Trajectory]:
    subs: list[Trajectory] = []
    for target in dict.fromkeys(_ref_paths(doc, path)):
        try:
            sub = orjson.loads(target.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            continue
        if isinstance(sub, dict) and not validate(sub):
            subs.append(to_trajectory(sub, target, parent_id, follow_refs=False))
    return subs


def _ref_paths(doc: dict[str, Any], path: Path) -> Iterator[Path]:
    """Existing sibling files named by the refs; never outside this file's folder."""
    # Harbor writes `trajectory.json` + `trajectory.<sub>.json`; copies may prefix both names
    prefix = (
        path.name.removesuffix("trajectory.json") if path.name.endswith("trajectory.json") else ""
    )
    for name in _ref_names(doc["steps"]):
        if "/" in name or "\\" in name or name.startswith("."):
            continue
        for candidate in (path.parent / name, path.parent / f"{prefix}{name}"):
            if candidate != path and candidate.is_file():
                yield candidate
                break


def _ref_names(raw_steps: list[Any]) -> Iterator[str]:
    for step in raw_steps:
        observation = step.get("observation") if isinstance(step, dict) else None
        results = observation.get("results") if isinstance(observation, dict) else None
        for result in results if isinstance(results, list) else []:
            refs = result.get("subagent_trajectory_ref") if isinstance(result, dict) else None
            for ref in refs if isinstance(refs, list) else []:
                if isinstance(ref, dict) and isinstance(ref.get("trajectory_path"), str):
                    yield ref["trajectory_path"]


def _final_usage(final: Any) -> Usage | None:
    if not isinstance(final, dict):
        return None
    return Usage(
        prompt_tokens=final.get("total_prompt_tokens") or 0,
        completion_tokens=final.get("total_completion_tokens") or 0,
        cached_tokens=final.get("total_cached_tokens") or 0,
    )


def _trial_result(path: Path) -> tuple[Outcome | None, str | None]:
    """Harbor layout: `<trial>/agent/trajectory.json` next to `<trial>/result.json`."""
    result_path = path.parent.parent / "result.json"
    if path.parent.name != "agent" or not result_path.is_file():
        return None, None
    try:
        result = orjson.loads(result_path.read_bytes())
        reward = result["verifier_result"]["rewards"]["reward"]
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError):
        return None, None
    status: OutcomeStatus = "passed" if float(reward) >= 1.0 else "failed"
    detail = f"verifier_result.rewards.reward = {reward}"
    return Outcome(status=status, source="harbor-result.json", detail=detail), result.get(
        "task_name"
    )


def _outcome(ours: Any) -> Outcome | None:
    if isinstance(ours, dict) and ours.get("status") in ("passed", "failed", "unknown"):
        return Outcome(status=ours["status"], source=ours.get("source"), detail=ours.get("detail"))
    return None


def _metadata(doc: dict[str, Any]) -> dict[str, Any]:
    meta = {k: doc[k] for k in ("notes", "extra", "continued_trajectory_ref") if doc.get(k)}
    if (doc.get("agent") or {}).get("extra"):
        meta["agent_extra"] = doc["agent"]["extra"]
    copied = [
        s.get("step_id") for s in doc["steps"] if isinstance(s, dict) and s.get("is_copied_context")
    ]
    if copied:
        meta["copied_context_step_ids"] = copied
    return meta


def _task(raw_steps: list[Any]) -> str | None:
    """The first user message, copied context included (a summarizer's task lives there)."""
    for raw in raw_steps:
        if isinstance(raw, dict) and raw.get("source") == "user":
            return message_text(raw.get("message"))
    return None


def _id(doc: dict[str, Any], path: Path) -> str:
    return doc.get("trajectory_id") or doc.get("session_id") or path.stem


def _first_model(steps: list[Step]) -> str | None:
    return next((s.model for s in steps if s.model), None)
