"""State projection (spec §3, decision §13.7): canonical steps -> compact state dicts, and the
rendering (redaction, sorted-key JSON, cut at 6000 characters) the evaluator reads.

A coding state after step i holds the completed steps (action summaries), `evidence_facts` (the
latest tool observations, at most 8 of at most 500 characters), the agent's latest notes, the files
changed so far, and the last step with its status. The state after step i is the state before step
i+1, so the runner scores each distinct state once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, Literal

from agentlens.redaction import clip_head
from agentlens.step_failure import failed
from agentlens.stepvalue.redaction import StringPolicy, redact
from agentlens.trajectory import Step, ToolCategory, Trajectory

MAX_FACTS = 8
MAX_FACT_CHARS = 500
MAX_STEPS_LISTED = 12
MAX_NOTES = 4
MAX_STATE_CHARS = 6000
TRUNCATED = " [truncated]"
EDIT_CATEGORIES = (ToolCategory.EDIT, ToolCategory.CREATE_FILE)

Slice = Literal["full", "evidence-only", "agent-output-only"]
SLICES: tuple[Slice, ...] = ("full", "evidence-only", "agent-output-only")
STRUCTURE_KEYS = frozenset({"question", "completed_steps", "last_step", "last_status"})
EVIDENCE_KEY_PARTS = [
    "evidence",
    "supported_claims",
    "contradicted_claims",
    "retrieval",
    "citation",
    "pubmed",
    "pmid",
    "snippet",
    "abstract",
    "artifact",
]


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else clip_head(text, limit - len(TRUNCATED)) + TRUNCATED


def coding_states(traj: Trajectory, *, upto: int | None = None) -> list[dict[str, Any]]:
    """States s_0 .. s_n of a coding trajectory: s_0 before the first agent step, s_i after step i.

    The task message is the question (carried by the prompt), so s_0 is the empty state.
    """
    steps = [s for s in traj.steps if s.kind in ("tool", "agent")]
    if upto is not None:
        steps = steps[:upto]
    states: list[dict[str, Any]] = [{}]
    for i in range(1, len(steps) + 1):
        states.append(_state_after(steps[:i]))
    return states


def agent_steps(traj: Trajectory) -> list[Step]:
    """The steps whose value is measured: tool calls and agent messages (not the task message)."""
    return [s for s in traj.steps if s.kind in ("tool", "agent")]


def _state_after(done: Sequence[Step]) -> dict[str, Any]:
    last = done[-1]
    facts = [_fact(s) for s in done if s.kind == "tool" and s.observation][-MAX_FACTS:]
    notes = [cut(s.text, MAX_FACT_CHARS) for s in done if s.text.strip()][-MAX_NOTES:]
    changed = sorted({f for s in done if s.category in EDIT_CATEGORIES for f in s.files})
    state: dict[str, Any] = {
        "completed_steps": [_summary(s) for s in done][-MAX_STEPS_LISTED:],
        "evidence_facts": facts,
        "agent_notes": notes,
        "files_changed": changed,
        "last_step": _summary(last),
        "last_status": "error" if failed(last) else "ok",
    }
    return state


def _summary(step: Step) -> str:
    what = step.tool_name or step.kind
    detail = step.command or ", ".join(step.files) or _first_line(step.text)
    return cut(f"#{step.index} {what}: {detail}" if detail else f"#{step.index} {what}", 160)


def _fact(step: Step) -> str:
    return cut(f"#{step.index} {step.tool_name}: {step.observation}", MAX_FACT_CHARS)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def slice_state(state: dict[str, Any], which: Slice) -> dict[str, Any]:
    """The `full`, `evidence-only` or `agent-output-only` slice of a state (spec §8).

    Membership is decided by the top-level key (the spec's key list, matched case-insensitively),
    so the two slices split the state between them (plus the structure keys in both). The
    authors' audit filters nested dicts with the same rule, which drops e.g.
    `evidence_facts.coverage_gaps` from both slices; we keep a kept key's value whole.
    """
    if which == "full":
        return state
    keep_evidence = which == "evidence-only"
    return {
        k: v
        for k, v in state.items()
        if str(k).lower() in STRUCTURE_KEYS or _is_evidence_key(k) == keep_evidence
    }


def _is_evidence_key(key: str) -> bool:
    name = key.lower()
    return any(part in name for part in EVIDENCE_KEY_PARTS)


def render_state(
    state: dict[str, Any], *, policy: StringPolicy = "whole", limit: int = MAX_STATE_CHARS
) -> str:
    """Redacted, sorted-key JSON of a state, cut to `limit` characters."""
    text = json.dumps(redact(state, policy), sort_keys=True, ensure_ascii=False, default=str)
    return cut(text, limit)


def state_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]
