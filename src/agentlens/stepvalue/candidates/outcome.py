"""Outcome candidates: {resolved, not-resolved} with the run's real label as gold, giving each
step's value towards success."""

from __future__ import annotations

from agentlens.errors import ConfigError
from agentlens.stepvalue.candidates.coding import coding_transitions
from agentlens.stepvalue.model import Candidate, EvalView, Problem
from agentlens.trajectory import Trajectory

RESOLVED = Candidate("resolved", "The agent's final change resolves the issue (the tests pass).")
NOT_RESOLVED = Candidate("not-resolved", "The agent's final change does not resolve the issue.")


def outcome_problem(traj: Trajectory, *, max_steps: int | None = None) -> Problem:
    """A coding trajectory scored against "will this run resolve the task"."""
    status = traj.outcome.status
    if status == "unknown":
        raise ConfigError(
            f"{traj.source.path or traj.id}: outcome candidates need a pass/fail label "
            "(give --labels FILE or a results sidecar)"
        )
    view = EvalView(
        question="Will the agent resolve the issue below?\n\n" + (traj.task or ""),
        candidates=(RESOLVED, NOT_RESOLVED),
    )
    return Problem(
        trajectory_id=traj.id,
        task_id=traj.task_id or traj.id,
        kind="outcome",
        view=view,
        gold_id="resolved" if status == "passed" else "not-resolved",
        transitions=coding_transitions(traj, max_steps=max_steps),
        redaction="span",
        notes={"outcome_source": traj.outcome.source},
    )
