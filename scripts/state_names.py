"""Process-state file names with and without `repo_relative_paths` (docs/validity.md, "One file,
one state name"): how many file-naming states a folder's runs rename, how many names each task's
runs use, and, leave-one-out as `agentlens cohort` scores them, the reference states a run matches.

    PYTHONPATH=src python scripts/state_names.py ../shared/data/swe-agent-java
    PYTHONPATH=src python scripts/state_names.py ../shared/data/agentlens-bench-dev/trajectories --no-match
"""

from __future__ import annotations

import argparse
import re
from collections import Counter, defaultdict
from collections.abc import Sequence

from agentlens.formats import read_paths
from agentlens.process.profiles import ProfileConfig, get_profile
from agentlens.process.pta import run_labels, run_states
from agentlens.process.reference import build_reference
from agentlens.process.score import score_trajectory
from agentlens.trajectory import Trajectory

AS_WRITTEN = get_profile("calibrated")
REPO_RELATIVE = get_profile("calibrated", repo_relative_paths=True)
MATCHED = re.compile(r"(\d+)/(\d+) matched")


def renamed(runs: Sequence[Trajectory]) -> None:
    """File-naming states whose name the fold changes, and the names each task's runs use."""
    named = moved = 0
    roots: Counter[str] = Counter()
    names: dict[bool, dict[str, set[str]]] = {False: defaultdict(set), True: defaultdict(set)}
    for run in runs:
        labels = run_labels(run, AS_WRITTEN)
        before = run_states(run, labels, AS_WRITTEN)
        after = run_states(run, labels, REPO_RELATIVE)
        for old, new in zip(before, after, strict=True):
            named += bool(old.file_path)
            if old.file_path != new.file_path:
                moved += 1
                root = old.file_path.removesuffix(new.file_path)
                roots[root if root != old.file_path else "(resolved from the cwd)"] += 1
            names[False][run.task_id or ""].add(old.file_path)
            names[True][run.task_id or ""].add(new.file_path)
    print(f"{len(runs)} runs: {moved} of {named} file-naming states renamed")
    print("  dropped roots:", ", ".join(f"{root!r} {n}" for root, n in roots.most_common(8)))
    count = {fold: sum(len(v - {""}) for v in names[fold].values()) for fold in (False, True)}
    print(f"  file names summed over tasks: {count[False]} -> {count[True]}")


def matched(runs: Sequence[Trajectory]) -> None:
    """Reference states matched, leave-one-out (donors: the task's other passing runs)."""
    by_task: dict[str, list[Trajectory]] = defaultdict(list)
    for run in runs:
        by_task[run.task_id or ""].append(run)
    totals = {False: [0, 0], True: [0, 0]}
    for task_runs in by_task.values():
        passing = [r for r in task_runs if r.outcome.status == "passed"]
        for run in task_runs:
            donors = [d for d in passing if d.id != run.id]
            if not donors:
                continue
            for fold, config in ((False, AS_WRITTEN), (True, REPO_RELATIVE)):
                got, of = _matched(run, donors, config)
                totals[fold][0] += got
                totals[fold][1] += of
    (a, b), (c, d) = totals[False], totals[True]
    print(f"  reference states matched (leave-one-out): {a}/{b} -> {c}/{d}")


def _matched(run: Trajectory, donors: list[Trajectory], config: ProfileConfig) -> tuple[int, int]:
    reason = score_trajectory(run, build_reference(donors, config), config).signals["cov"].reason
    found = MATCHED.search(reason)
    return (int(found[1]), int(found[2])) if found else (0, 0)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--no-match", action="store_true", help="skip the leave-one-out scoring")
    args = parser.parse_args(argv)
    runs = read_paths([args.folder], unevaluated="failed").trajectories
    renamed(runs)
    if not args.no_match:
        matched(runs)


if __name__ == "__main__":
    main()
