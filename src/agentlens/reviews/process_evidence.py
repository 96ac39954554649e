"""Process-scoring results (issue 3, `agentlens.process`) as judge evidence and as compare
metrics. References are built per task from the passing trajectories given (as AgentLens-Bench's
merged PTAs are), unless the caller passes its own; tasks without a passing run are skipped."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from itertools import groupby

from agentlens.process.profiles import Profile, get_profile
from agentlens.process.pta import Reference, build_reference, run_labels
from agentlens.process.result import ProcessResult
from agentlens.process.score import score_trajectory
from agentlens.trajectory import Trajectory


def references_from_passing(
    trajs: Sequence[Trajectory], profile: Profile = "paper"
) -> dict[str, Reference]:
    passing: dict[str, list[Trajectory]] = defaultdict(list)
    for traj in sorted(trajs, key=lambda t: t.id):
        if traj.outcome.status == "passed" and traj.task_id:
            passing[traj.task_id].append(traj)
    return {task: build_reference(runs, profile) for task, runs in passing.items()}


def score_all(
    trajs: Sequence[Trajectory], references: dict[str, Reference], profile: Profile = "paper"
) -> dict[str, ProcessResult]:
    return {
        t.id: score_trajectory(t, references[t.task_id], profile)
        for t in trajs
        if t.task_id in references
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
    lines = [
        f"Stage timeline (E explore, I implement, V verify, O orchestrate): {stage_timeline(traj)}"
    ]
    if result is not None:
        wasted = [f"{k} {w.wasted_steps} steps" for k, w in result.waste.items() if w.wasted_steps]
        lines.append(f"Waste: {', '.join(wasted) or 'none'} (severity {result.waste_severity})")
        if result.divergence.reason:
            lines.append(f"Divergence from the reference: {result.divergence.reason}")
        lines.append(f"Process tier: {result.tier} ({result.tier_reason})")
    return "\n".join(lines)
