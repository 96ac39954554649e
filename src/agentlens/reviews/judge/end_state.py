"""The end state as the trajectory itself records it, for a review without `--repo`: the run's
outcome and its final diff (the last `git diff` the agent ran, else the edits it made)."""

from __future__ import annotations

from agentlens.list_text import counted
from agentlens.reviews.judge.compact import last_diff_step
from agentlens.trajectory import ToolCategory, Trajectory

PATCH_KEYS = ("final_diff", "git_patch", "model_patch", "patch")


def final_diff(traj: Trajectory) -> str | None:
    """A patch the format stores, else the last `git diff` output, else the edits as a list."""
    for key in PATCH_KEYS:
        value = traj.metadata.get(key)
        if isinstance(value, str) and value.strip():
            return value
    index = last_diff_step(traj.steps)
    if index is not None:
        step = traj.steps[index]
        return f"(the output of S{index} `{step.command}`)\n{step.observation}"
    edits = [s for s in traj.steps if s.category in (ToolCategory.EDIT, ToolCategory.CREATE_FILE)]
    if not edits:
        return None
    lines = [f"(no diff recorded; the {counted(len(edits), 'edit')} the agent made)"]
    for step in edits:
        where = ", ".join(step.files) or step.tool_name or "?"
        lines.append(f"S{step.index} {step.tool_name} {where}")
    return "\n".join(lines)


def outcome(traj: Trajectory) -> str | None:
    """The recorded outcome (`passed`, `failed`, …) with where it comes from, if known."""
    status = traj.outcome.status
    if status == "unknown":
        return None
    source = f" (from {traj.outcome.source})" if traj.outcome.source else ""
    detail = f": {traj.outcome.detail}" if traj.outcome.detail else ""
    return f"{status}{source}{detail}"
