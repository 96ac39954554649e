"""Structural validator for ATIF v1.0-v1.8 documents (Harbor's Agent Trajectory Interchange Format).

Checks what the Harbor models enforce (`extra="forbid"` on every object, required fields, the
`ATIF-v1.N` version string, sequential `step_id`s, agent-only fields only on agent steps) and
returns readable problems instead of raising, so the reader can name the first few in one line.
Fields are not gated by the version that introduced them: the Harbor models accept every field
under every version, and so do we.
"""

from __future__ import annotations

import re
from typing import Any

from agentlens.formats._json import preview

VERSION = re.compile(r"^ATIF-v1\.([0-8])$")
ROOT_KEYS = {
    "schema_version",
    "session_id",
    "trajectory_id",
    "agent",
    "steps",
    "notes",
    "final_metrics",
    "extra",
    "continued_trajectory_ref",
    "subagent_trajectories",
}
AGENT_KEYS = {"name", "version", "model_name", "tool_definitions", "extra"}
AGENT_ONLY = {"model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"}
STEP_KEYS = AGENT_ONLY | {
    "step_id",
    "timestamp",
    "source",
    "message",
    "observation",
    "is_copied_context",
    "llm_call_count",
    "extra",
}
CALL_KEYS = {"tool_call_id", "function_name", "arguments", "extra"}
RESULT_KEYS = {"source_call_id", "content", "subagent_trajectory_ref", "extra"}
METRIC_KEYS = {
    "prompt_tokens",
    "completion_tokens",
    "cached_tokens",
    "cost_usd",
    "prompt_token_ids",
    "completion_token_ids",
    "logprobs",
    "extra",
}
FINAL_KEYS = {
    "total_prompt_tokens",
    "total_completion_tokens",
    "total_cached_tokens",
    "total_cost_usd",
    "total_steps",
    "extra",
}
SOURCES = {"system", "user", "agent"}


def atif_minor(doc: Any) -> int | None:
    """The N of `ATIF-v1.N`, or None when the version string is not a valid ATIF version."""
    version = doc.get("schema_version") if isinstance(doc, dict) else None
    match = VERSION.match(version) if isinstance(version, str) else None
    return int(match[1]) if match else None


def validate(doc: Any) -> list[str]:
    """Every problem found, each as `where: what`; an empty list means the document conforms."""
    if not isinstance(doc, dict):
        return [f"top level: should be an object, found {type(doc).__name__}"]
    problems: list[str] = []
    minor = atif_minor(doc)
    if minor is None:
        found = doc.get("schema_version")
        problems.append(f"schema_version: {preview(found)} is not 'ATIF-v1.0' … 'ATIF-v1.8'")
    _extra_keys(problems, "top level", doc, ROOT_KEYS)
    if "session_id" not in doc and (minor is None or minor <= 6):
        problems.append("session_id: required before ATIF-v1.7")
    _agent(problems, doc.get("agent"))
    _steps(problems, doc.get("steps"))
    if "final_metrics" in doc:
        _object(problems, "final_metrics", doc["final_metrics"], FINAL_KEYS)
    subs = doc.get("subagent_trajectories")
    if subs is not None and not isinstance(subs, list):
        problems.append(f"subagent_trajectories: should be a list, found {type(subs).__name__}")
    for i, sub in enumerate(subs if isinstance(subs, list) else []):
        problems += [f"subagent_trajectories[{i}].{p}" for p in validate(sub)]
    return problems


def _agent(problems: list[str], agent: Any) -> None:
    if not _object(problems, "agent", agent, AGENT_KEYS):
        return
    for key in ("name", "version"):
        if not isinstance(agent.get(key), str):
            problems.append(f"agent.{key}: required string")


def _steps(problems: list[str], steps: Any) -> None:
    if not isinstance(steps, list) or not steps:
        problems.append("steps: required non-empty list")
        return
    for i, step in enumerate(steps):
        _step(problems, f"steps[{i}]", step, i + 1)


def _step(problems: list[str], where: str, step: Any, expected_id: int) -> None:
    if not _object(problems, where, step, STEP_KEYS):
        return
    if step.get("step_id") != expected_id:
        problems.append(f"{where}.step_id: {preview(step.get('step_id'))}, expected {expected_id}")
    source = step.get("source")
    if not isinstance(source, str) or source not in SOURCES:
        problems.append(f"{where}.source: {preview(source)} is not system/user/agent")
    if not isinstance(step.get("message"), str | list):
        problems.append(f"{where}.message: required string or list of content parts")
    if source != "agent":
        misplaced = sorted(AGENT_ONLY & step.keys())
        if misplaced:
            problems.append(f"{where}: {', '.join(misplaced)} allowed on agent steps only")
    if source == "user" and "observation" in step:
        problems.append(f"{where}.observation: not allowed on user steps")
    calls = step.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        problems.append(f"{where}.tool_calls: should be a list, found {type(calls).__name__}")
    for j, call in enumerate(calls if isinstance(calls, list) else []):
        _tool_call(problems, f"{where}.tool_calls[{j}]", call)
    if "observation" in step:
        _observation(problems, f"{where}.observation", step["observation"])
    if "metrics" in step:
        _object(problems, f"{where}.metrics", step["metrics"], METRIC_KEYS)


def _tool_call(problems: list[str], where: str, call: Any) -> None:
    if not _object(problems, where, call, CALL_KEYS):
        return
    for key in ("tool_call_id", "function_name"):
        if not isinstance(call.get(key), str):
            problems.append(f"{where}.{key}: required string")
    if not isinstance(call.get("arguments"), dict):
        problems.append(f"{where}.arguments: required object")


def _observation(problems: list[str], where: str, observation: Any) -> None:
    if not _object(problems, where, observation, {"results"}):
        return
    results = observation.get("results")
    if not isinstance(results, list):
        problems.append(f"{where}.results: required list")
        return
    for j, result in enumerate(results):
        _object(problems, f"{where}.results[{j}]", result, RESULT_KEYS)


def _object(problems: list[str], where: str, value: Any, allowed: set[str]) -> bool:
    if not isinstance(value, dict):
        problems.append(f"{where}: should be an object, found {type(value).__name__}")
        return False
    _extra_keys(problems, where, value, allowed)
    return True


def _extra_keys(problems: list[str], where: str, value: dict[str, Any], allowed: set[str]) -> None:
    unknown = sorted(k for k in value if k not in allowed)
    if unknown:
        fields = "field" if len(unknown) == 1 else "fields"
        problems.append(f"{where}: unknown {fields} {', '.join(map(preview, unknown))}")
