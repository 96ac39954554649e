"""ATIF steps to canonical steps: tool calls split out, results matched, look-alikes folded in.

One ATIF agent step with N tool calls becomes N `tool` steps sharing `turn = step_id`; the step's
message, usage and cost go on the first of them, so per-step sums stay exact. Results are matched
to calls by `source_call_id`; results without one (Terminus screen deltas) pair with the calls
by position, or all go to the last call when the counts differ. Fields that `atif_writer` keeps
under `extra.agentlens` (category, files, turn, ...) are read back.
"""

from __future__ import annotations

import re
from typing import Any, TypeGuard

import orjson

from agentlens.formats._json import arr, count, json_type, number, obj, text
from agentlens.formats._steps import classify, parse_time
from agentlens.trajectory import Step, StepKind, ToolCategory, Usage

RESULT_FOR = re.compile(r"Tool result for (\S+)")
_CATEGORIES = set(ToolCategory)


def atif_steps(raw_steps: list[Any]) -> list[Step]:
    """Canonical steps of an ATIF `steps` list, indexed from 0.

    Steps marked `is_copied_context` repeat a parent's history for a summarizer; ATIF says to
    leave them out of scoring, so they are dropped here (their ids stay in the metadata).
    """
    orphans = _lenient_results(raw_steps)
    steps: list[Step] = []
    for i, raw in enumerate(raw_steps):
        if isinstance(raw, dict) and id(raw) not in orphans.folded and not _skipped(raw):
            steps += _convert(raw, orphans, f"steps[{i}]")
    for i, step in enumerate(steps):
        step.index = i
    return steps


def _skipped(raw: dict[str, Any]) -> bool:
    return bool(raw.get("is_copied_context") or carried(raw).get("placeholder"))


def _convert(raw: dict[str, Any], orphans: _Orphans, where: str) -> list[Step]:
    text = message_text(raw.get("message"))
    results = _results(raw, where)
    calls = [c for c in arr(raw.get("tool_calls"), f"{where}.tool_calls") if isinstance(c, dict)]
    if raw.get("source") != "agent" or not calls:
        kind: StepKind = "system" if raw.get("source") == "system" else "agent"
        kind = "user" if raw.get("source") == "user" else kind
        obs = (
            _joined(results) if results else _lenient_obs(raw) or _carried_text(raw, "observation")
        )
        usage, cost = metrics(raw.get("metrics"), f"{where}.metrics")
        is_error = carried(raw).get("is_error")
        return [
            Step(
                index=0,
                kind=kind,
                text=text,
                turn=_turn(raw, own=kind == "agent"),
                observation=obs,
                is_error=is_error if isinstance(is_error, bool) else None,
                usage=usage,
                cost=cost,
                subtrajectory=_sub_ref(results),
                stored_stage=_carried_text(raw, "stored_stage"),
                **_common(raw),
            )
        ]
    observations = _match(calls, results, orphans)
    steps = [_tool_step(raw, call, obs) for call, obs in zip(calls, observations, strict=True)]
    steps[0].text = text
    steps[0].usage, steps[0].cost = metrics(raw.get("metrics"), f"{where}.metrics")
    return steps


def _results(raw: dict[str, Any], where: str) -> list[dict[str, Any]]:
    observation = obj(raw.get("observation"), f"{where}.observation")
    results = arr(observation.get("results"), f"{where}.observation.results")
    return [obj(r, f"{where}.observation.results[{j}]") for j, r in enumerate(results)]


def _turn(raw: dict[str, Any], own: bool = True) -> int | None:
    """The turn a step belongs to: the carried one, else its own step id (agent steps only)."""
    ours = carried(raw)
    turn = ours["turn"] if "turn" in ours else raw.get("step_id") if own else None
    return turn if isinstance(turn, int) and not isinstance(turn, bool) else None


def _carried_text(raw: dict[str, Any], key: str) -> str | None:
    return text(carried(raw).get(key), f"extra.agentlens.{key}")


def carried(raw: dict[str, Any]) -> dict[str, Any]:
    """What `atif_writer` keeps under `extra.agentlens` (fields ATIF has no place for)."""
    extra = raw.get("extra")
    ours = extra.get("agentlens") if isinstance(extra, dict) else None
    return ours if isinstance(ours, dict) else {}


def _common(raw: dict[str, Any]) -> dict[str, Any]:
    return {
        "timestamp": parse_time(raw.get("timestamp")),
        "model": text(raw.get("model_name"), "a step's model_name"),
        "raw": raw,
    }


def _call_id(call: dict[str, Any], name: str) -> str | None:
    return text(call.get("tool_call_id") or call.get("id"), f"tool call {name!r:.40} id")


def _tool_step(raw: dict[str, Any], call: dict[str, Any], obs: tuple[str | None, Any]) -> Step:
    name = str(call.get("function_name") or call.get("name") or "unknown")
    args: dict[str, Any] = call["arguments"] if isinstance(call.get("arguments"), dict) else {}
    view = classify(name, args)
    ours = carried(call)
    category = ToolCategory(ours["category"]) if ours.get("category") in _CATEGORIES else None
    files = ours.get("files")
    is_error = obs[1] if obs[1] is not None else ours.get("is_error")
    step = Step(
        index=0,
        kind="tool",
        turn=_turn(raw),
        tool_name=name,
        category=category or view.category,
        call_id=None if ours.get("call_id_made") is True else _call_id(call, name),
        arguments=args,
        command=_carried_text(call, "command") if "category" in ours else view.command,
        files=files if _strings(files) else view.files,
        observation=obs[0],
        is_error=is_error if isinstance(is_error, bool) else None,
        subtrajectory=_carried_text(call, "subtrajectory"),
        stored_stage=_carried_text(call, "stored_stage"),
        **_common(raw),
    )
    if ours.get("timestamp"):
        step.timestamp = parse_time(ours["timestamp"])
    return step


def _match(
    calls: list[dict[str, Any]], results: list[Any], orphans: _Orphans
) -> list[tuple[str | None, Any]]:
    by_id = {r["source_call_id"]: r for r in results if isinstance(r.get("source_call_id"), str)}
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
        for c in _list(s.get("tool_calls"))
        if isinstance(c, dict) and isinstance(c.get("id"), str)
    }
    for raw in raw_steps:
        obs = raw.get("observation") if isinstance(raw, dict) else None
        if not isinstance(obs, dict) or "results" in obs:
            continue
        message = raw.get("message")
        match = RESULT_FOR.match(message) if isinstance(message, str) else None
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
    """Text of a string or a list of content parts (media parts shown as `[image]` etc.)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_part_text(p) for p in content if isinstance(p, dict))
    try:
        return orjson.dumps(content).decode()
    except orjson.JSONEncodeError:  # nested deeper than orjson writes
        return f"[{json_type(content)}]"


def _joined(results: list[Any]) -> str | None:
    texts = [content_text(r.get("content")) for r in results if isinstance(r, dict)]
    present = [t for t in texts if t is not None]
    return "\n".join(present) if present else None


def _part_text(part: dict[str, Any]) -> str:
    said = part.get("text")
    return said if isinstance(said, str) and said else f"[{part.get('type')}]"


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _strings(value: Any) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _sub_ref(results: list[dict[str, Any]]) -> str | None:
    for result in results:
        refs = result.get("subagent_trajectory_ref")
        for ref in refs if isinstance(refs, list) else []:
            if isinstance(ref, dict):
                found = ref.get("trajectory_id") or ref.get("session_id")
                found = found or ref.get("trajectory_path")
                return found if isinstance(found, str) else None
    return None


TOKEN_KEYS = ("prompt_tokens", "completion_tokens", "cached_tokens")


def metrics(metrics: Any, where: str) -> tuple[Usage | None, float | None]:
    if not isinstance(metrics, dict):
        return None, None
    if not any(key in metrics for key in TOKEN_KEYS):  # a price alone says nothing of tokens
        return None, number(metrics.get("cost_usd"), f"{where}.cost_usd")
    usage = Usage(
        prompt_tokens=count(metrics.get("prompt_tokens"), f"{where}.prompt_tokens"),
        completion_tokens=count(metrics.get("completion_tokens"), f"{where}.completion_tokens"),
        cached_tokens=count(metrics.get("cached_tokens"), f"{where}.cached_tokens"),
    )
    return usage, number(metrics.get("cost_usd"), f"{where}.cost_usd")
