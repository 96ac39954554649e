"""The demo's process-scoring sections: each labeler against the labels stored in the traces,
then the AgentLens-Bench protocol (k = 5 donors, seed 42) scored with the default profile, and
its validity table as `agentlens cohort` prints it."""

from __future__ import annotations

from agentlens.cli._cohort_tables import model_table, separation_table, tier_table, validity_table
from agentlens.demo.context import DemoContext
from agentlens.list_text import counted
from agentlens.process.cohort import cohort_report, result_row
from agentlens.process.labeler import label_trajectory
from agentlens.process.profiles import DEFAULT_PROFILE, Profile
from agentlens.process.protocol_notes import unscored_tasks
from agentlens.process.protocols import score_splits, split_cohort
from agentlens.process.validity import cohort_validity

# The stored labels are the released labeler's output; the paper labeler departs from them on
# purpose wherever careful human annotators do (docs/labeler.md).
LABELERS: tuple[tuple[Profile, str], ...] = (
    ("sdk-compat", "the released labeler, quirks included"),
    ("paper", "labels as careful humans do (its agreement with them: docs/validity.md)"),
)


def labels_section(ctx: DemoContext) -> None:
    """How often each labeler agrees with the labels stored in the traces."""
    stored = [t for t in ctx.trajectories if any(s.stored_stage for s in t.steps)]
    if not stored:
        ctx.console.print("no stored intent labels in these traces")
        return
    for profile, what in LABELERS:
        same = total = 0
        for traj in stored:
            for step, stage in zip(traj.steps, label_trajectory(traj, profile), strict=True):
                if step.stored_stage:
                    total += 1
                    same += stage == step.stored_stage
        ctx.console.print(
            f"{profile:>10}: {same:,}/{total:,} stored labels reproduced ({100 * same / total:.1f}%): "
            f"{what}",
            highlight=False,
            soft_wrap=True,
        )


# `cohort` scores leave-one-out unless told otherwise, so its tiers of the same runs differ
PROTOCOL_NOTE = "protocol agentlens-bench, as `agentlens cohort --protocol agentlens-bench`"


def process_section(ctx: DemoContext) -> None:
    """Score every task's runs against a reference of 5 passing donors; print the key tables."""
    splits = split_cohort(ctx.trajectories, "agentlens-bench")
    if not splits:
        ctx.console.print("no task has 5 passing runs; nothing to score")
        return
    results = score_splits(splits, DEFAULT_PROFILE)
    ctx.extras["process_pairs"] = list(
        zip((t for s in splits for t in s.scored), results, strict=True)
    )
    rows = [result_row(r) for r in results]
    report = cohort_report(rows, signals=("struct", "cov", "coh", "temp", "composite"), n_boot=500)
    ctx.extras["process_rows"] = rows
    ctx.console.print(
        f"{counted(len(splits), 'task')}, {counted(sum(len(s.donors) for s in splits), 'donor')}, "
        f"{counted(len(rows), 'run')} scored (profile {DEFAULT_PROFILE}, the default; {PROTOCOL_NOTE})",
        highlight=False,
    )
    for line in unscored_tasks(ctx.trajectories, splits, "agentlens-bench"):
        ctx.console.print(f"not scored: {line}", highlight=False, markup=False)
    for table in (tier_table(report), model_table(report), separation_table(report)):
        ctx.console.print(table)
    figures = cohort_validity(rows, DEFAULT_PROFILE)
    if figures is not None:
        ctx.console.print(validity_table(figures))
