"""Fault-localisation candidates for coding trajectories: "where does the fix belong?".

Candidates are the files edited or created by the most runs of the task (counted once per run).
The gold is the existing file most passing runs modify: edit steps only, minus files the same run
created, so scratch reproducer scripts do not become the answer. When a merged PTA reference is
given, its modified-file nodes weighted by support decide the gold instead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentlens.errors import ConfigError
from agentlens.stepvalue.candidates.coding import coding_transitions
from agentlens.stepvalue.model import Candidate, EvalView, Problem
from agentlens.trajectory import ToolCategory, Trajectory

DEFAULT_K = 4
MODIFIED_PREFIXES = ("file_modified:", "file_patched:", "files_modified:")


@dataclass(frozen=True)
class FaultSpace:
    candidates: tuple[Candidate, ...]
    gold_id: str
    run_counts: dict[str, int]
    gold_source: str


def norm_path(path: str) -> str:
    path = path.strip().lstrip("/")
    return path.removeprefix("testbed/")


def touched_files(traj: Trajectory) -> set[str]:
    """Files an edit or create step of the run names."""
    cats = (ToolCategory.EDIT, ToolCategory.CREATE_FILE)
    return {f for s in traj.steps if s.category in cats for f in s.files}


def modified_existing(traj: Trajectory) -> set[str]:
    """Files the run edits that it did not create itself."""
    created = {f for s in traj.steps if s.category == ToolCategory.CREATE_FILE for f in s.files}
    return {f for s in traj.steps if s.category == ToolCategory.EDIT for f in s.files} - created


def gold_from_reference(reference: Any) -> Counter[str]:
    """Support-weighted modified files of a merged reference (`agentlens.process.pta.Reference`)."""
    counts: Counter[str] = Counter()
    for node in reference.nodes.values():
        if node.file_path and node.resulting_state.startswith(MODIFIED_PREFIXES):
            counts[norm_path(node.file_path)] += node.support
    return counts


def fault_localisation_space(
    runs: Sequence[Trajectory], *, k: int = DEFAULT_K, reference: Any = None
) -> FaultSpace:
    """Candidates and gold from all runs of one task (and optionally its PTA reference)."""
    if not runs:
        raise ConfigError("fault-localisation candidates need the runs of the task")
    counts = Counter(f for run in runs for f in touched_files(run))
    by_norm: dict[str, str] = {}
    for f in sorted(counts, key=lambda f: (-counts[f], f)):
        by_norm.setdefault(norm_path(f), f)
    ref_counts = gold_from_reference(reference) if reference is not None else Counter()
    passing = [r for r in runs if r.outcome.status == "passed"]
    run_counts = ref_counts or Counter(norm_path(f) for r in passing for f in modified_existing(r))
    if not run_counts:
        task = runs[0].task_id or runs[0].id
        raise ConfigError(
            f"no passing run of task {task} modifies a file: no fault-localisation gold"
        )
    gold_norm = min(run_counts, key=lambda f: (-run_counts[f], f))
    gold = by_norm.get(gold_norm, "/" + gold_norm)
    ranked = [f for f in sorted(counts, key=lambda f: (-counts[f], f)) if f != gold]
    chosen = sorted([gold, *ranked[: k - 1]])
    return FaultSpace(
        candidates=tuple(Candidate(f, f"The fix for this task belongs in {f}") for f in chosen),
        gold_id=gold,
        run_counts={f: counts.get(f, 0) for f in chosen},
        gold_source="pta-reference" if ref_counts else f"{len(passing)} passing runs",
    )


def fault_localisation_problem(
    traj: Trajectory, space: FaultSpace, *, max_steps: int | None = None
) -> Problem:
    """A coding trajectory scored against "which file does the fix belong in"."""
    view = EvalView(
        question=("Which file must be changed to fix the issue below?\n\n" + (traj.task or "")),
        candidates=space.candidates,
    )
    return Problem(
        trajectory_id=traj.id,
        task_id=traj.task_id or traj.id,
        kind="fault-localisation",
        view=view,
        gold_id=space.gold_id,
        transitions=coding_transitions(traj, max_steps=max_steps),
        redaction="span",
        notes={"gold_source": space.gold_source, "runs_editing": space.run_counts},
    )
