"""Warnings for a score that compares the wrong things: a run of another task than the
reference's, a run that was one of the reference's donors (scored against itself), or a
reference with nothing in it to compare."""

from __future__ import annotations

from collections.abc import Sequence

from agentlens.process.pta import Reference
from agentlens.process.run_units import CohortRun


def reference_warnings(runs: Sequence[CohortRun], reference: Reference) -> list[str]:
    donors = set(reference.donors)
    tasks = set(reference.tasks)
    lines = []
    for run in runs:
        if tasks and run.task_id and run.task_id not in tasks:
            lines.append(
                f"{run.id}: its task {run.task_id!r} is not the reference's "
                f"({', '.join(sorted(tasks))}): the score compares different work"
            )
        if run.id in donors:
            lines.append(
                f"{run.id}: was one of the reference's donors, so it is scored against a "
                "graph built from itself (in-sample: its score flatters it)"
            )
    return lines


def nothing_to_compare(reference: Reference) -> str:
    """Why `reference` cannot tell runs apart, "" if it can: with its start state alone, matching,
    coverage and the temporal profile are 0 of 0 for every run, and only a run's own coherence
    moves its score."""
    if len(reference.nodes) > 1:
        return ""
    return (
        "the reference holds only its start state (its donors recorded no labelled step): a "
        "score against it says nothing of how close a run came to the passing runs"
    )
