"""Process-scoring results (issue 3, `agentlens.process`) as judge evidence and as compare
metrics. References are built per task from the passing runs given (both runs pooled, for
`compare`) and every run is scored leave-one-out (`agentlens.process.protocols`): a passing run
against the task's OTHER passing runs, a failing run against all of them, when at least 2 donors
exist; so no run is scored against a reference built from itself. Runs of tasks with too few
passing runs are not scored and are listed. A caller with fixed per-task references scores
against those instead, leaving out a run that is a donor of its own reference (in-sample: scored
against a graph built from itself), as the HTML report leaves it out of its figures."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from agentlens.process.profiles import Profile, get_profile
from agentlens.process.protocols import TaskSplit, group_by_task, leave_one_out_split, score_splits
from agentlens.process.pta import Reference, run_labels
from agentlens.process.result import ProcessResult
from agentlens.process.score import score_trajectory
from agentlens.trajectory import Trajectory

MIN_DONORS = 2
LOO_METHOD = (
    f"pooled leave-one-out: a passing run against its task's other passing runs (≥ {MIN_DONORS}), "
    "a failing run against all of them"
)

RunKey = tuple[str, str]


def run_key(traj: Trajectory) -> RunKey:
    """Identity of a run across two loads of the same files: (trajectory id, source path)."""
    return traj.id, traj.source.path


@dataclass
class ProcessScores:
    """Process results by run key, how the references were made, and what was not scored: runs
    of skipped tasks, and runs left out as donors of their own (fixed) reference."""

    results: dict[RunKey, ProcessResult]
    method: str
    tasks_skipped: list[str] = field(default_factory=list)
    in_sample: set[RunKey] = field(default_factory=set)

    def of(self, trajs: Sequence[Trajectory]) -> list[ProcessResult]:
        return [self.results[run_key(t)] for t in trajs if run_key(t) in self.results]

    def unscored(self, trajs: Sequence[Trajectory]) -> list[str]:
        left = self.results.keys() | self.in_sample
        return [t.id for t in trajs if run_key(t) not in left]

    def in_sample_ids(self, trajs: Sequence[Trajectory]) -> list[str]:
        return [t.id for t in trajs if run_key(t) in self.in_sample]


def _unique(trajs: Sequence[Trajectory]) -> list[Trajectory]:
    return list({run_key(t): t for t in trajs}.values())


def leave_one_out_scores(
    trajs: Sequence[Trajectory],
    only: Collection[Trajectory] | None = None,
    profile: Profile = "paper",
) -> ProcessScores:
    """Score `only` (default: all of `trajs`) leave-one-out against references from the passing
    runs of `trajs`; a run present twice (same id and file) counts once."""
    pool = _unique(trajs)
    wanted = {run_key(t) for t in (pool if only is None else only)}
    groups = group_by_task(pool)
    splits = []
    for split in leave_one_out_split(groups, min_donors=MIN_DONORS):
        scored = [t for t in split.scored if run_key(t) in wanted]
        if scored:
            splits.append(TaskSplit(split.task_id, split.donors, scored))
    runs = [t for split in splits for t in split.scored]
    results = dict(zip(map(run_key, runs), score_splits(splits, profile), strict=True))
    covered = {split.task_id for split in splits}
    skipped = sorted(
        task for task, members in groups.items() if task not in covered and _any_in(members, wanted)
    )
    return ProcessScores(results, LOO_METHOD, skipped)


def _any_in(trajs: Sequence[Trajectory], keys: Collection[RunKey]) -> bool:
    return any(run_key(t) in keys for t in trajs)


def fixed_reference_scores(
    trajs: Sequence[Trajectory], references: Mapping[str, Reference]
) -> ProcessScores:
    """Score every run against its task's given reference (scored with the reference's profile),
    but its donors (in-sample, left out); tasks without one are skipped."""
    results: dict[RunKey, ProcessResult] = {}
    in_sample: set[RunKey] = set()
    groups = group_by_task(_unique(trajs))
    for task in sorted(set(groups) & set(references)):
        ref = references[task]
        for traj in groups[task]:
            if traj.id in ref.donors:
                in_sample.add(run_key(traj))
            else:
                results[run_key(traj)] = score_trajectory(traj, ref, ref.profile)
    skipped = sorted(set(groups) - set(references))
    return ProcessScores(results, "fixed per-task references", skipped, in_sample)


def scores_summary(
    scores: ProcessScores, runs: Mapping[str, Sequence[Trajectory]]
) -> dict[str, Any]:
    """The `process` block of `compare --json`: method, skipped tasks, how many runs were left
    out in-sample, and per run the scored count, the unscored and in-sample ids and the metric
    samples."""
    return {
        "method": scores.method,
        "tasks_skipped": scores.tasks_skipped,
        "in_sample": len(scores.in_sample),
        "runs": {
            name: {
                "scored": len(scores.of(trajs)),
                "unscored_ids": scores.unscored(trajs),
                "in_sample_ids": scores.in_sample_ids(trajs),
                "samples": metrics(scores.of(trajs)),
            }
            for name, trajs in runs.items()
        },
    }


def metrics(results: Sequence[ProcessResult]) -> dict[str, list[float]]:
    """Per-trajectory samples for `compare`: Lucky (0/1, passing runs only), verification
    coverage (% of the reference's V states matched) and waste severity (wasted / states)."""
    return {
        "lucky": [float(r.tier == "lucky") for r in results if r.outcome == "passed"],
        "v_coverage": [r.stages.percent("V") for r in results],
        "waste": [r.waste_severity for r in results],
    }


def stage_timeline(traj: Trajectory, profile: Profile = "paper") -> str:
    """Runs of intent stages by step id, e.g. `S1–S8 E, S9–S12 I, S13 V`."""
    labels = run_labels(traj, get_profile(profile))
    parts = []
    for stage, group in groupby(enumerate(labels), key=lambda x: x[1]):
        ids = [i for i, _ in group]
        if stage is None:
            continue
        span = f"S{ids[0]}" if len(ids) == 1 else f"S{ids[0]}–S{ids[-1]}"
        parts.append(f"{span} {stage}")
    return ", ".join(parts)


def evidence_text(traj: Trajectory, result: ProcessResult | None) -> str:
    """The `<process_evidence>` block: stage timeline, waste and divergence, with reasons."""
    # one profile per view: the timeline uses the labels of the profile that scored the run
    timeline = stage_timeline(traj, result.profile if result is not None else "paper")  # type: ignore[arg-type]
    lines = [f"Stage timeline (E explore, I implement, V verify, O orchestrate): {timeline}"]
    if result is not None:
        wasted = [f"{k} {w.wasted_steps} steps" for k, w in result.waste.items() if w.wasted_steps]
        lines.append(f"Waste: {', '.join(wasted) or 'none'} (severity {result.waste_severity})")
        if result.divergence.reason:
            lines.append(f"Divergence from the reference: {result.divergence.reason}")
        lines.append(f"Process tier: {result.tier} ({result.tier_reason})")
    return "\n".join(lines)
