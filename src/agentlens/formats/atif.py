"""ATIF v1.0-v1.8 (Harbor `trajectory.json`): validated, then mapped to the canonical model.

Steps are mapped by `_atif_steps` (one canonical step per tool call; see there).
A non-conformant file raises `SchemaError`; `lenient=True` reads it best-effort, also accepting
the common look-alike shape (`tool_calls[{id, name}]`, tool results as separate system steps),
and notes the problems as a warning. `read_path` reads leniently a file it detected as ATIF;
`--format atif` or `--strict` keep the conformance check.
The verdict is not in the file: a Harbor trial `result.json` two levels up supplies it.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import orjson

from agentlens.errors import SchemaError, TraceError
from agentlens.formats._atif_steps import TOKEN_KEYS, atif_steps, carried, message_text
from agentlens.formats._json import (
    ReadGuard,
    ShapeError,
    arr,
    count,
    head_text,
    loads,
    number,
    obj,
    preview,
    text,
)
from agentlens.formats._reader_base import SuffixReader
from agentlens.formats.atif_schema import validate
from agentlens.formats.limits import read_bounded
from agentlens.list_text import first_few
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


class AtifReader(SuffixReader):
    name: ClassVar[str] = "atif"
    suffixes: ClassVar[tuple[str, ...]] = (".json",)

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
            raise SchemaError(
                path,
                f"not conformant ATIF: {_shown(problems)}; use --lenient to read it best-effort",
                self.name,
            )
        if not isinstance(doc, dict) or not isinstance(doc.get("steps"), list):
            raise SchemaError(path, "no 'steps' list, even read leniently", self.name)
        with ReadGuard(path, self.name):
            trajectory = to_trajectory(doc, path)
        if problems:
            trajectory.metadata["schema_problems"] = problems
            note = f"not conformant ATIF, read best-effort: {_shown(problems)}"
            trajectory.add_warnings([note])
        yield trajectory


def _shown(problems: list[str]) -> str:
    return first_few(problems, SHOWN_PROBLEMS, sep="; ")


def to_trajectory(
    doc: dict[str, Any], path: Path, parent_id: str | None = None, *, follow_refs: bool = True
) -> Trajectory:
    """Map one (already validated or leniently accepted) ATIF document to a `Trajectory`.

    Sub-agents come from `subagent_trajectories` (embedded) and, with `follow_refs`, from the
    valid sibling files that `subagent_trajectory_ref.trajectory_path` names (one level deep).
    """
    agent = obj(doc.get("agent"), "agent")
    ours = carried(doc)
    steps = atif_steps(arr(doc.get("steps"), "steps"))
    own_id = _id(doc, path)
    subs = [
        to_trajectory(_sub(s, i), path, own_id)
        for i, s in enumerate(arr(doc.get("subagent_trajectories"), "subagent_trajectories"))
    ]
    skipped: list[str] = []
    subs += _referenced(doc, path, own_id, skipped) if follow_refs else []
    parent = obj(agent.get("extra"), "agent.extra").get("parent_session_id")
    outcome, task_id = _trial_result(path)
    final = obj(doc.get("final_metrics"), "final_metrics")
    return Trajectory(
        id=own_id,
        task_id=text(ours.get("task_id"), "extra.agentlens.task_id") or task_id,
        task=text(ours.get("task"), "extra.agentlens.task") or _task(doc["steps"]),
        agent=_agent(agent),
        model=_model(agent) or _first_model(steps),
        outcome=_outcome(ours.get("outcome")) or outcome or Outcome(),
        source=Source(
            format="atif",
            path=str(path),
            format_version=text(doc.get("schema_version"), "schema_version"),
        ),
        steps=steps,
        reported_usage=_final_usage(final),
        reported_cost=number(final.get("total_cost_usd"), "final_metrics.total_cost_usd"),
        parent_id=parent_id or text(parent, "agent.extra.parent_session_id"),
        subtrajectories=subs,
        metadata=_metadata(doc, ours) | ({"warnings": skipped} if skipped else {}),
    )


def _sub(sub: Any, i: int) -> dict[str, Any]:
    where = f"subagent_trajectories[{i}]"
    if not isinstance(obj(sub, where).get("steps"), list):
        raise ShapeError(f"{where} has no 'steps' list")
    return sub


def _model(agent: dict[str, Any]) -> str | None:
    return text(agent.get("model_name") or agent.get("model"), "agent.model_name")


def _referenced(
    doc: dict[str, Any], path: Path, parent_id: str, skipped: list[str]
) -> list[Trajectory]:
    """Sub-agents from the referenced files; a broken one is left out and named in `skipped`."""
    subs: list[Trajectory] = []
    for target in dict.fromkeys(_ref_paths(doc, path)):
        try:
            sub = orjson.loads(read_bounded(target))
            problems = validate(sub) if isinstance(sub, dict) else ["not a JSON object"]
            if not problems:
                subs.append(to_trajectory(sub, target, parent_id, follow_refs=False))
        except (OSError, orjson.JSONDecodeError, ShapeError, RecursionError) as exc:
            problems = [str(exc)[:120]]
        if problems:
            skipped.append(f"sub-agent file {target} skipped: {problems[0]}")
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
            if candidate != path and _is_file(candidate):
                yield candidate
                break


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # e.g. a name too long for the file system: no such sibling
        return False


def referrer_of(path: Path) -> Path | None:
    """The Harbor trajectory beside `path` that reads it as a sub-agent: `<p>trajectory.json`
    whose `subagent_trajectory_ref` names `trajectory.<sub>.json` (`_ref_paths`), for a file
    `<p>trajectory.<sub>.json`."""
    name = path.name
    at = name.rfind("trajectory.")
    if at < 0 or not name.endswith(".json") or name.endswith("trajectory.json"):
        return None
    parent = Path(os.path.abspath(path)).with_name(f"{name[:at]}trajectory.json")
    if not _is_file(parent):
        return None
    return parent if {name, name[at:]} & _referenced_names(str(parent)) else None


def _referenced_names(parent: str) -> frozenset[str]:
    try:
        info = os.stat(parent)
    except OSError:
        return frozenset()
    return _names_in(parent, info.st_ino, info.st_size, info.st_mtime_ns)


# The sub-agent files of one run come one after another; the key holds what a rewrite changes
# (a file replaced by rename, or written over), so a long process never reads a stale answer.
@functools.lru_cache(maxsize=16)
def _names_in(parent: str, _inode: int, _size: int, _mtime_ns: int) -> frozenset[str]:
    try:
        doc = orjson.loads(read_bounded(Path(parent)))
        steps = doc.get("steps") if isinstance(doc, dict) else None
        return frozenset(_ref_names(steps if isinstance(steps, list) else []))
    except (OSError, orjson.JSONDecodeError, RecursionError, TraceError):
        return frozenset()  # a parent that cannot be read reads no sub-agent: read it alone


def _ref_names(raw_steps: list[Any]) -> Iterator[str]:
    for step in raw_steps:
        observation = step.get("observation") if isinstance(step, dict) else None
        results = observation.get("results") if isinstance(observation, dict) else None
        for result in results if isinstance(results, list) else []:
            refs = result.get("subagent_trajectory_ref") if isinstance(result, dict) else None
            for ref in refs if isinstance(refs, list) else []:
                if isinstance(ref, dict) and isinstance(ref.get("trajectory_path"), str):
                    yield ref["trajectory_path"]


def _agent(agent: dict[str, Any]) -> Agent:
    made = carried(agent).get("made")  # stand-ins `atif_writer` wrote for an unknown field
    made = made if isinstance(made, list) else []
    name, version = (
        None if key in made else text(agent.get(key), f"agent.{key}") for key in ("name", "version")
    )
    return Agent(name=name, version=version)


def _final_usage(final: dict[str, Any]) -> Usage | None:
    if not any(f"total_{key}" in final for key in TOKEN_KEYS):  # e.g. only `total_cost_usd`
        return None
    return Usage(
        prompt_tokens=count(final.get("total_prompt_tokens"), "final_metrics.total_prompt_tokens"),
        completion_tokens=count(
            final.get("total_completion_tokens"), "final_metrics.total_completion_tokens"
        ),
        cached_tokens=count(final.get("total_cached_tokens"), "final_metrics.total_cached_tokens"),
    )


def _trial_result(path: Path) -> tuple[Outcome | None, str | None]:
    """Harbor layout: `<trial>/agent/trajectory.json` next to `<trial>/result.json`."""
    result_path = path.parent.parent / "result.json"
    if path.parent.name != "agent" or not result_path.is_file():
        return None, None
    try:
        result = orjson.loads(read_bounded(result_path))
        reward = result["verifier_result"]["rewards"]["reward"]
        passed = float(reward) >= 1.0  # a bool or a numeric string counts, as Harbor's own does
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError, OverflowError):
        return None, None  # a broken or unscored result.json: outcome unknown
    status: OutcomeStatus = "passed" if passed else "failed"
    detail = f"verifier_result.rewards.reward = {preview(reward)}"
    task = result.get("task_name")
    return Outcome(status=status, source="harbor-result.json", detail=detail), (
        task if isinstance(task, str) else None
    )


def _outcome(ours: Any) -> Outcome | None:
    if isinstance(ours, dict) and ours.get("status") in ("passed", "failed", "unknown"):
        source = text(ours.get("source"), "extra.agentlens.outcome.source")
        detail = text(ours.get("detail"), "extra.agentlens.outcome.detail")
        return Outcome(status=ours["status"], source=source, detail=detail)
    return None


def _metadata(doc: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    if "metadata" in ours:  # written by `atif_writer`: the trajectory's own, as it was
        return dict(obj(ours["metadata"], "extra.agentlens.metadata"))
    meta = {k: doc[k] for k in ("notes", "extra", "continued_trajectory_ref") if doc.get(k)}
    if obj(doc.get("agent"), "agent").get("extra"):
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
    own = doc.get("trajectory_id") or doc.get("session_id")
    return text(own, "trajectory_id / session_id") or path.stem


def _first_model(steps: list[Step]) -> str | None:
    return next((s.model for s in steps if s.model), None)
