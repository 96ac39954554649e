#!/usr/bin/env python3
"""Where the `paper` labeler and the release part on the AgentLens-Bench dev traces.

    PYTHONPATH=src python scripts/labeler_vs_release.py [--data DIR] [--task psf__requests-1724]

Prints how many stored (released) stage labels the `paper` labeler keeps, the differing states
by transition (release → paper), where the state fields derived from canonical fields part from
the release's own (`Step.raw`: refused and successful edits, listings, thinks), and, for one
task's dev reference (the AgentLens-Bench protocol's donors), how many merged states
re-labelling in step order changes under each labeler (`relabel_merged`; docs/profiles.md rows
5-7).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from agentlens.formats import read_path, read_paths
from agentlens.process.labeler import label_trajectory
from agentlens.process.profiles import PAPER, SDK_COMPAT, ProfileConfig
from agentlens.process.protocols import split_cohort
from agentlens.process.reference import build_reference
from agentlens.process.states import state_from_step
from agentlens.trajectory import Trajectory

DEV = Path(__file__).resolve().parents[1] / "../shared/data/agentlens-bench-dev"


def transitions(runs: list[Trajectory]) -> tuple[int, Counter[tuple[str, str]]]:
    """The number of labelled tool states and the (stored, paper) pairs that differ."""
    states, differ = 0, Counter[tuple[str, str]]()
    for traj in runs:
        ours = label_trajectory(traj, "paper")
        for step, stage in zip(traj.steps[1:], ours[1:], strict=True):
            states += 1
            if step.stored_stage != stage:
                differ[(step.stored_stage or "-", stage or "-")] += 1
    return states, differ


@dataclass
class FieldDeviations:
    """Tool states by what the derived fields say, and how many of them the release says otherwise."""

    refused_edits: int = 0
    refused_called_modified: int = 0  # the release prefixes "edited successfully" to the refusal
    made_edits: int = 0
    made_called_failed: int = 0
    listings: int = 0
    listings_path_dropped: int = 0
    thinks: int = 0
    thinks_called_error: int = 0  # for a word in the thought's text

    def lines(self) -> list[str]:
        return [
            f"  refused edits: {self.refused_edits}, the release calls "
            f"{self.refused_called_modified} of them modified; successful edits: "
            f"{self.made_edits}, the release calls {self.made_called_failed} of them failed",
            f"  listings: {self.listings}, the release drops the path of "
            f"{self.listings_path_dropped}",
            f"  thinks: {self.thinks}, the release calls {self.thinks_called_error} of them an error",
        ]


def field_deviations(runs: list[Trajectory]) -> FieldDeviations:
    """Each tool step's resulting state derived from canonical fields (`paper`) against the
    release's own in `Step.raw` (`sdk-compat`)."""
    found = FieldDeviations()
    for traj in runs:
        for step in traj.steps:
            if step.kind == "tool" and isinstance(step.raw, dict):
                ours = state_from_step(step, 0, use_raw=False).resulting_state
                count_deviation(found, ours, str(step.raw.get("resulting_state") or ""))
    return found


def count_deviation(found: FieldDeviations, ours: str, release: str) -> None:
    if ours.startswith(("file_modified:", "file_modify_failed:")):
        refused = ours.startswith("file_modify_failed:")
        found.refused_edits += refused
        found.refused_called_modified += refused and release.startswith("file_modified:")
        found.made_edits += not refused
        found.made_called_failed += not refused and release.startswith("file_modify_failed:")
    elif ours.startswith("dir_listed:"):
        found.listings += 1
        found.listings_path_dropped += ours != "dir_listed:" and release == "dir_listed:"
    elif ours.startswith("tool_result:think:"):
        found.thinks += 1
        found.thinks_called_error += release == "tool_result:think:error"


def relabelled(donors: list[Trajectory], base: ProfileConfig) -> tuple[int, int]:
    """Merged states of the donors' reference, and how many re-labelling in step order changes."""
    kept = build_reference(donors, replace(base, relabel_merged=False))
    merged = build_reference(donors, replace(base, relabel_merged=True))
    changed = sum(merged.nodes[key].stage != state.stage for key, state in kept.nodes.items())
    return len(kept.nodes), changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEV)
    parser.add_argument("--task", default="psf__requests-1724")
    args = parser.parse_args(argv)
    files = sorted((args.data / "trajectories").glob("*/*.json"))
    if not files:
        print(f"no trajectories under {args.data / 'trajectories'}", file=sys.stderr)
        return 2
    runs = [traj for path in files for traj in read_path(path)]
    states, differ = transitions(runs)
    n_differ = sum(differ.values())
    agree = states - n_differ
    print(f"{len(files)} runs, {states} states: {agree} agree ({100 * agree / states:.1f}%), "
          f"{n_differ} differ")  # fmt: skip
    for (release, paper), count in differ.most_common():
        print(f"  {release} → {paper}: {count}")
    print("state fields derived from canonical fields vs the release's own:")
    print("\n".join(field_deviations(runs).lines()))
    splits = split_cohort(read_paths([args.data / "trajectories"]).trajectories, "agentlens-bench")
    donors = [list(s.donors) for s in splits if s.task_id == args.task]
    if not donors:
        print(f"{args.task}: no reference under the AgentLens-Bench protocol", file=sys.stderr)
        return 2
    for name, base in (("released labeler", SDK_COMPAT), ("paper labeler", PAPER)):
        n_states, changed = relabelled(donors[0], base)
        print(f"{args.task} reference, {name}: re-labelling changes {changed} of {n_states} states")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
