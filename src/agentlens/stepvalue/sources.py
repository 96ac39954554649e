"""Turn command-line inputs into problems: trajectories plus a candidate source name or file."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentlens.errors import ConfigError
from agentlens.process.pta_io import read_reference
from agentlens.process.reference import build_reference
from agentlens.stepvalue.candidates import (
    explicit_problems,
    fault_localisation_problem,
    fault_localisation_space,
    outcome_problem,
)
from agentlens.stepvalue.candidates.fault_localisation import DEFAULT_K
from agentlens.stepvalue.candidates.tracked import tracked_from_repo
from agentlens.stepvalue.model import Problem
from agentlens.trajectory import Trajectory

SOURCES = ("fault-localisation", "outcome")


def build_problems(
    trajectories: Sequence[Trajectory],
    candidates: str,
    *,
    runs: Sequence[Trajectory] = (),
    max_steps: int | None = None,
    k: int = DEFAULT_K,
    reference: str | None = None,
    repo: str | None = None,
    skipped: list[str] | None = None,
) -> list[Problem]:
    """Problems for `candidates` = "fault-localisation", "outcome" or an `asv.v1` JSONL path.

    Fault localisation pools `trajectories` and `runs` by task id to find the task's runs.
    `reference` is an AgentLens reference JSON file, or "auto" to merge the passing runs; `repo`
    a checkout of the task's repository whose tracked files bound the candidates. A trajectory
    that cannot be posed (no pass/fail label, no gold file for its task) raises, or, when
    `skipped` is given, is left out with its one-line reason appended there.
    """
    if candidates not in SOURCES:
        if not Path(candidates).is_file():
            raise ConfigError(
                f"--candidates must be one of {', '.join(SOURCES)} or an asv.v1 JSONL file; "
                f"{candidates!r} is neither"
            )
        problems = explicit_problems(candidates)
        return [_truncate(p, max_steps) for p in problems]
    if not trajectories:
        raise ConfigError(f"--candidates {candidates} needs trajectory files")
    pool = _by_task([*trajectories, *runs])
    tracked = tracked_from_repo(repo) if repo and candidates != "outcome" else None

    def pose(traj: Trajectory) -> Problem:
        if candidates == "outcome":
            return outcome_problem(traj, max_steps=max_steps)
        task_runs = pool[traj.task_id or traj.id]
        ref = _reference(reference, task_runs)
        space = fault_localisation_space(task_runs, k=k, reference=ref, tracked=tracked)
        return fault_localisation_problem(traj, space, max_steps=max_steps)

    problems = []
    for traj in trajectories:
        try:
            problems.append(pose(traj))
        except ConfigError as exc:
            if skipped is None:
                raise
            skipped.append(str(exc))
    return problems


def _by_task(trajs: Sequence[Trajectory]) -> dict[str, list[Trajectory]]:
    pool: dict[str, dict[str, Trajectory]] = {}
    for traj in trajs:
        pool.setdefault(traj.task_id or traj.id, {})[traj.id] = traj
    return {task: list(runs.values()) for task, runs in pool.items()}


def _reference(reference: str | None, runs: Sequence[Trajectory]) -> Any:
    if reference is None:
        return None
    if reference == "auto":
        return build_reference([r for r in runs if r.outcome.status == "passed"], "paper")
    return read_reference(reference)


def _truncate(problem: Problem, max_steps: int | None) -> Problem:
    if max_steps is None:
        return problem
    from dataclasses import replace

    return replace(problem, transitions=problem.transitions[:max_steps])
