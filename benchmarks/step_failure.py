"""Which steps of ../shared/data change verdict under the shared "did this step fail" rule
(`agentlens.step_failure.failed`) against the judge compaction's rule before it (its markers
anywhere in the first 4,000 characters of the result). Only steps without a reader's error flag
can change. Prints the counts by format, each change with its kind, and a few examples:

    PYTHONPATH=src python benchmarks/step_failure.py [--examples 3] [--list]
"""

from __future__ import annotations

import argparse
import re
from collections import Counter, defaultdict
from pathlib import Path

from agentlens.formats.stream import read_paths
from agentlens.step_failure import (
    ACCESS_FAILURE,
    HARNESS_ERROR,
    READ_CHARS,
    diff_lines,
    failed,
    listed_lines,
    listing_step,
    only_inspects,
    own_report,
)
from agentlens.trajectory import Step, Trajectory

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
BEFORE = re.compile(
    r"Traceback|\bError\b|\berror:|Exception|FAILED|command not found|No such file|not found"
)


def failed_before(step: Step) -> bool:
    if step.is_error is not None:
        return step.is_error
    return bool(step.observation and BEFORE.search(step.observation[:READ_CHARS]))


def all_steps(trajs: list[Trajectory]) -> list[tuple[Trajectory, Step]]:
    found: list[tuple[Trajectory, Step]] = []
    for traj in trajs:
        found += [(traj, s) for s in traj.steps]
        found += all_steps(traj.subtrajectories)
    return found


def kind_of_change(step: Step) -> str:
    """Where the markers the old rule saw went (the first place that holds one), or which new
    marker the old rule lacked."""
    text = (step.observation or "")[:READ_CHARS]
    if not failed_before(step):
        report = own_report(text, step.command, step.category)
        if HARNESS_ERROR.match(text):
            return "new marker: the result begins `ERROR:` (the harness)"
        for marker in ("Your proposed edit has introduced", "EXECUTION TIMED OUT"):
            if marker in report:
                return f"new marker: {marker}"
        return "new marker: an exception line (`ValueError: …`)"
    if only_inspects(step):
        return "read/search/list output (no access failure)"
    typed = {x.strip() for x in (step.command or "").splitlines() if x.strip()}
    lines = text.splitlines()
    in_diff = diff_lines(lines)
    listed = listed_lines(lines, listing_step(step.command, step.category))
    for i, line in enumerate(lines):
        if not BEFORE.search(line):
            continue
        if i in in_diff:
            return "unified diff"
        if i in listed:
            return "numbered listing (editor window, cat -n)"
        if line.strip() in typed:
            return "echoed command (heredoc)"
    return "word boundary (`Exceptions`)"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--examples", type=int, default=3)
    parser.add_argument("--list", action="store_true", help="every changed step, one a line")
    args = parser.parse_args()
    trajs = read_paths([DATA]).trajectories
    steps = all_steps(trajs)
    inferred = [(t, s) for t, s in steps if s.is_error is None and s.observation]
    per_format: dict[str, Counter[str]] = defaultdict(Counter)
    kinds: Counter[tuple[str, str]] = Counter()
    examples: dict[tuple[str, str], list[str]] = defaultdict(list)
    for traj, step in inferred:
        before, after = failed_before(step), failed(step)
        counts = per_format[traj.source.format]
        counts["inferred"] += 1
        counts["failed before"] += before
        counts["failed after"] += after
        if before == after:
            continue
        change = "failed → ok" if before else "ok → failed"
        key = (change, kind_of_change(step))
        kinds[key] += 1
        line = f"{traj.id} S{step.index} {step.tool_name}: {(step.command or '')[:70]!r}"
        examples[key].append(line)
        if args.list:
            print(f"{change} | {key[1]} | {line}")
    print(
        f"{len(trajs)} trajectories, {len(steps)} steps, {len(inferred)} with an inferred verdict"
    )
    for fmt, c in sorted(per_format.items()):
        print(
            f"  {fmt}: {c['inferred']} inferred, failed {c['failed before']} → {c['failed after']}"
        )
    for (change, kind), n in sorted(kinds.items(), key=lambda x: (x[0][0], -x[1])):
        print(f"{change}: {n:4d}  {kind}")
        for line in examples[(change, kind)][: args.examples]:
            print(f"      {line}")
    access = sum(
        1 for _, s in inferred if only_inspects(s) and ACCESS_FAILURE.search(s.observation or "")
    )
    print(f"read/search/list steps that still fail (could not reach their file): {access}")


if __name__ == "__main__":
    main()
