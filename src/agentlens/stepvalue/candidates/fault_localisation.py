"""Fault-localisation candidates for coding trajectories: "where does the fix belong?".

Candidates are files of the task's repository (`tracked.py`: `git ls-files` of `--repo`, else
files the runs read or edit and none creates), ranked by how many runs edit them, then by how
many read them (counted once per run). Scratch and report files the agent writes
(`/FIX_SUMMARY.md`, `reproduce_issue.py`) are never candidates. The gold is the tracked file most
passing runs modify; when a merged PTA reference is given, its modified-file nodes weighted by
support decide the gold instead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentlens.errors import ConfigError
from agentlens.shell.working_dir import step_paths
from agentlens.stepvalue.candidates.coding import coding_transitions
from agentlens.stepvalue.candidates.tracked import TrackedFiles, norm_path, tracked_from_runs
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
    tracked_source: str = ""


def touched_files(traj: Trajectory) -> set[str]:
    """Files an edit or create step of the run names."""
    return _named_by(traj, ToolCategory.EDIT, ToolCategory.CREATE_FILE)


def read_files(traj: Trajectory) -> set[str]:
    """Files a read step of the run names."""
    return _named_by(traj, ToolCategory.READ_FILE)


def modified_existing(traj: Trajectory) -> set[str]:
    """Files the run edits that it did not create itself."""
    return _named_by(traj, ToolCategory.EDIT) - _named_by(traj, ToolCategory.CREATE_FILE)


def _named_by(traj: Trajectory, *categories: ToolCategory) -> set[str]:
    """Files the run's steps of `categories` name, each resolved against the directory it was
    named in (`step_paths`): `NodeCursor.java` opened after `cd src/.../node` is that file."""
    return {f for s in traj.steps if s.category in categories for f in step_paths(s)}


def gold_from_reference(reference: Any) -> Counter[str]:
    """Support-weighted modified files of a merged reference (`agentlens.process.pta.Reference`)."""
    counts: Counter[str] = Counter()
    for node in reference.nodes.values():
        if node.file_path and node.resulting_state.startswith(MODIFIED_PREFIXES):
            counts[norm_path(node.file_path)] += node.support
    return counts


def fault_localisation_space(
    runs: Sequence[Trajectory],
    *,
    k: int = DEFAULT_K,
    reference: Any = None,
    tracked: TrackedFiles | None = None,
) -> FaultSpace:
    """Candidates and gold from all runs of one task (and optionally its PTA reference), limited
    to `tracked` files (default: the runs' evidence, see `tracked.py`)."""
    if not runs:
        raise ConfigError("fault-localisation candidates need the runs of the task")
    ref_counts = gold_from_reference(reference) if reference is not None else Counter()
    tracked = tracked or tracked_from_runs(runs, ref_counts)
    passing = [r for r in runs if r.outcome.status == "passed"]
    modified = Counter(norm_path(f) for r in passing for f in modified_existing(r))
    run_counts = Counter({f: n for f, n in (ref_counts or modified).items() if f in tracked})
    if not run_counts:
        task = runs[0].task_id or runs[0].id
        raise ConfigError(
            f"no passing run of task {task} modifies a repository file: no fault-localisation gold"
        )
    gold_norm = min(run_counts, key=lambda f: (-run_counts[f], f))
    edits = Counter(f for run in runs for f in touched_files(run) if f in tracked)
    reads = Counter(f for run in runs for f in read_files(run) if f in tracked)
    spelling = _spellings([*edits, *reads])
    gold = spelling.get(gold_norm, "/" + gold_norm)
    ranked = sorted(set(spelling.values()), key=lambda f: (-edits[f], -reads[f], f))
    chosen = sorted([gold, *[f for f in ranked if f != gold][: k - 1]])
    if len(chosen) < 2:
        raise ConfigError(
            f"task {runs[0].task_id or runs[0].id}: {gold} is the only candidate file (a forced "
            "choice needs 2); give more runs of the task (--runs) or its checkout (--repo)"
        )
    return FaultSpace(
        candidates=tuple(Candidate(f, f"The fix for this task belongs in {f}") for f in chosen),
        gold_id=gold,
        run_counts={f: edits.get(f, 0) for f in chosen},
        gold_source="pta-reference" if ref_counts else f"{len(passing)} passing runs",
        tracked_source=tracked.source,
    )


def _spellings(files: Sequence[str]) -> dict[str, str]:
    """One spelling per normalised path (the first seen), so `/a.py` and `a.py` are one candidate."""
    by_norm: dict[str, str] = {}
    for f in files:
        by_norm.setdefault(norm_path(f), f)
    return by_norm


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
        notes={
            "gold_source": space.gold_source,
            "runs_editing": space.run_counts,
            "tracked_files": space.tracked_source,
        },
    )
