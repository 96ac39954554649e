"""ATIF v1.0-v1.8 (Harbor `trajectory.json`): validated, then mapped to the canonical model.

One ATIF agent step with N tool calls becomes N `tool` steps sharing `turn = step_id`; the step's
message, usage and cost go on the first of them, so per-step sums stay exact. Results are matched
to calls by `source_call_id`; results without one (Terminus screen deltas) pair with the calls
by position, or all go to the last call when the counts differ.

A non-conformant file raises `SchemaError`; `lenient=True` reads it best-effort, also accepting
the common look-alike shape (`tool_calls[{id, name}]`, tool results as separate system steps).
The verdict is not in the file: a Harbor trial `result.json` two levels up supplies it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import orjson

from agentlens.errors import SchemaError
from agentlens.formats._json import head_text, loads
from agentlens.formats._steps import classify, parse_time
from agentlens.formats.atif_schema import validate
from agentlens.trajectory import (
    Agent,
    Outcome,
    OutcomeStatus,
    Source,
    Step,
    StepKind,
    ToolCategory,
    Trajectory,
    Usage,
)

RESULT_FOR = re.compile(r"Tool result for (\S+)")
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


def to_trajectory(doc: dict[str, Any], path: Path, parent_id: str | None = None) -> Trajectory:
    """Map one (already validated or leniently accepted) ATIF document to a `Trajectory`."""
    agent = doc.get("agent") or {}
    ours = _ours(doc)
    steps = _steps(doc["steps"])
    subs = [to_trajectory(s, path, _id(doc, path)) for s in doc.get("subagent_trajectories") or []]
    outcome, task_id = _trial_result(path)
    return Trajectory(
        id=_id(doc, path),
        task_id=ours.get("task_id") or task_id,
        task=ours.get("task") or next((s.text for s in steps if s.kind == "user"), None),
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


def _steps(raw_steps: list[Any]) -> list[Step]:
    orphans = _lenient_results(raw_steps)
    steps: list[Step] = []
    for raw in raw_steps:
        if (
            isinstance(raw, dict)
            and id(raw) not in orphans.folded
            and not _ours(raw).get("placeholder")
        ):
            steps += _convert(raw, orphans)
    for i, step in enumerate(steps):
        step.index = i
    return steps


def _convert(raw: dict[str, Any], orphans: _Orphans) -> list[Step]:
    text = message_text(raw.get("message"))
    results = (raw.get("observation") or {}).get("results") or []
    calls = [c for c in raw.get("tool_calls") or [] if isinstance(c, dict)]
    if raw.get("source") != "agent" or not calls:
        kind: StepKind = "system" if raw.get("source") == "system" else "agent"
        kind = "user" if raw.get("source") == "user" else kind
        obs = _joined(results) if results else _lenient_obs(raw) or _ours(raw).get("observation")
        usage, cost = _metrics(raw.get("metrics"))
        turn = raw.get("step_id") if kind == "agent" else None
        turn = _ours(raw).get("turn", turn)
        return [
            Step(
                index=0,
                kind=kind,
                text=text,
                turn=turn,
                observation=obs,
                usage=usage,
                cost=cost,
                subtrajectory=_sub_ref(results),
                stored_stage=_ours(raw).get("stored_stage"),
                **_common(raw),
            )
        ]
    observations = _match(calls, results, orphans)
    steps = [_tool_step(raw, call, obs) for call, obs in zip(calls, observations, strict=True)]
    steps[0].text = text
    steps[0].usage, steps[0].cost = _metrics(raw.get("metrics"))
    return steps


def _ours(raw: dict[str, Any]) -> dict[str, Any]:
    """What `atif_writer` keeps under `extra.agentlens` (fields ATIF has no place for)."""
    extra = raw.get("extra")
    ours = extra.get("agentlens") if isinstance(extra, dict) else None
    return ours if isinstance(ours, dict) else {}


def _common(raw: dict[str, Any]) -> dict[str, Any]:
    return {
        "timestamp": parse_time(raw.get("timestamp")),
        "model": raw.get("model_name"),
        "raw": raw,
    }


def _tool_step(raw: dict[str, Any], call: dict[str, Any], obs: tuple[str | None, Any]) -> Step:
    name = str(call.get("function_name") or call.get("name") or "unknown")
    args: dict[str, Any] = call["arguments"] if isinstance(call.get("arguments"), dict) else {}
    view = classify(name, args)
    ours = _ours(call)
    category = ToolCategory(ours["category"]) if ours.get("category") in set(ToolCategory) else None
    step = Step(
        index=0,
        kind="tool",
        turn=_ours(raw).get("turn", raw.get("step_id")),
        tool_name=name,
        category=category or view.category,
        call_id=call.get("tool_call_id") or call.get("id"),
        arguments=args,
        command=ours.get("command") if "category" in ours else view.command,
        files=ours["files"] if isinstance(ours.get("files"), list) else view.files,
        observation=obs[0],
        is_error=obs[1] if obs[1] is not None else ours.get("is_error"),
        subtrajectory=ours.get("subtrajectory"),
        stored_stage=ours.get("stored_stage"),
        **_common(raw),
    )
    if ours.get("timestamp"):
        step.timestamp = parse_time(ours["timestamp"])
    return step


def _match(
    calls: list[dict[str, Any]], results: list[Any], orphans: _Orphans
) -> list[tuple[str | None, Any]]:
    by_id = {r.get("source_call_id"): r for r in results if r.get("source_call_id")}
    loose = [r for r in results if not r.get("source_call_id")]
    out: list[tuple[str | None, Any]] = []
    for call in calls:
        cid = str(call.get("tool_call_id") or call.get("id"))
        if cid in by_id:
            out.append((content_text(by_id[cid].get("content")), None))
        else:
            out.append(orphans.results.get(cid, (None, None)))
    missing = [i for i, o in enumerate(out) if o[0] is None]
    if loose and missing:
        if len(loose) == len(missing):
            for i, result in zip(missing, loose, strict=True):
                out[i] = (content_text(result.get("content")), None)
        else:
            out[missing[-1]] = (_joined(loose), None)
    return out


class _Orphans:
    """Look-alike files put tool results in system steps saying `Tool result for <id>`."""

    def __init__(self) -> None:
        self.results: dict[str, tuple[str | None, bool | None]] = {}
        self.folded: set[int] = set()


def _lenient_results(raw_steps: list[Any]) -> _Orphans:
    orphans = _Orphans()
    call_ids = {
        c.get("id")
        for s in raw_steps
        if isinstance(s, dict)
        for c in s.get("tool_calls") or []
        if isinstance(c, dict)
    }
    for raw in raw_steps:
        obs = raw.get("observation") if isinstance(raw, dict) else None
        if not isinstance(obs, dict) or "results" in obs:
            continue
        match = RESULT_FOR.match(str(raw.get("message") or ""))
        if match and match[1] in call_ids:
            result = obs.get("result")
            failed = result.get("success") is False if isinstance(result, dict) else None
            orphans.results[match[1]] = (content_text(obs.get("content")), failed)
            orphans.folded.add(id(raw))
    return orphans


def _lenient_obs(raw: dict[str, Any]) -> str | None:
    obs = raw.get("observation")
    return content_text(obs.get("content")) if isinstance(obs, dict) and "content" in obs else None


def message_text(message: Any) -> str:
    """A step message as text; multimodal content parts keep their text and name the media."""
    return content_text(message) or ""


def content_text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") or f"[{p.get('type')}]" for p in content if isinstance(p, dict)]
        return "\n".join(parts)
    return orjson.dumps(content).decode()


def _joined(results: list[Any]) -> str | None:
    texts = [content_text(r.get("content")) for r in results if isinstance(r, dict)]
    present = [t for t in texts if t is not None]
    return "\n".join(present) if present else None


def _sub_ref(results: list[Any]) -> str | None:
    for result in results:
        for ref in result.get("subagent_trajectory_ref") or []:
            return ref.get("trajectory_id") or ref.get("session_id") or ref.get("trajectory_path")
    return None


def _metrics(metrics: Any) -> tuple[Usage | None, float | None]:
    if not isinstance(metrics, dict):
        return None, None
    usage = Usage(
        prompt_tokens=metrics.get("prompt_tokens") or 0,
        completion_tokens=metrics.get("completion_tokens") or 0,
        cached_tokens=metrics.get("cached_tokens") or 0,
    )
    return usage, metrics.get("cost_usd")


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


def _id(doc: dict[str, Any], path: Path) -> str:
    return doc.get("trajectory_id") or doc.get("session_id") or path.stem


def _first_model(steps: list[Step]) -> str | None:
    return next((s.model for s in steps if s.model), None)
