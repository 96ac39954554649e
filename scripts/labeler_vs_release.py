#!/usr/bin/env python3
"""Where the `paper` labeler and the release part on the AgentLens-Bench dev traces.

    PYTHONPATH=src python scripts/labeler_vs_release.py [--data DIR] [--task psf__requests-1724]

Prints how many stored (released) stage labels the `paper` labeler keeps, the differing states
by transition (release → paper), and, for one task's dev reference (the AgentLens-Bench
protocol's donors), how many merged states re-labelling in step order changes under each
labeler (`relabel_merged`; docs/profiles.md).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

from agentlens.formats import read_path, read_paths
from agentlens.process.labeler import label_trajectory
from agentlens.process.profiles import PAPER, SDK_COMPAT, ProfileConfig
from agentlens.process.protocols import split_cohort
from agentlens.process.pta import build_reference
from agentlens.trajectory import Trajectory

DEV = Path(__file__).resolve().parents[1] / "../shared/data/agentlens-bench-dev"


def transitions(files: list[Path]) -> tuple[int, Counter[tuple[str, str]]]:
    """The number of labelled tool states and the (stored, paper) pairs that differ."""
    states, differ = 0, Counter[tuple[str, str]]()
    for path in files:
        for traj in read_path(path):
            ours = label_trajectory(traj, "paper")
            for step, stage in zip(traj.steps[1:], ours[1:], strict=True):
                states += 1
                if step.stored_stage != stage:
                    differ[(step.stored_stage or "-", stage or "-")] += 1
    return states, differ


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
    states, differ = transitions(files)
    n_differ = sum(differ.values())
    agree = states - n_differ
    print(f"{len(files)} runs, {states} states: {agree} agree ({100 * agree / states:.1f}%), "
          f"{n_differ} differ")  # fmt: skip
    for (release, paper), count in differ.most_common():
        print(f"  {release} → {paper}: {count}")
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
