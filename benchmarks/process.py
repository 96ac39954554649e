"""Speed of process scoring on the AgentLens-Bench dev protocol, ours vs the released SDK.

Protocol (spec §14.1): load the dev traces, per task merge k=5 donors (one shared Random(42) over
file-name-sorted passing runs), score every other run of the task. Timed separately: loading, and
merge + score. The released SDK (if present at $AGENTLENS_SDK) runs the same protocol on the same
files and donors in the same process; the ratio is printed, and results are checked identical.
Times are CPU seconds of this process (robust on a shared machine) and wall seconds.

    python benchmarks/process.py [--no-sdk] [--profile] [--repeat N] [--report]

`--report` also prints, per profile, tier shares, the waste tables (paper Tables 8/9) and the
Lucky-Pass mechanism counts next to the paper's numbers and the release's stored rows.
"""

from __future__ import annotations

import argparse
import cProfile
import csv
import pstats
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agentlens.process.protocols import TaskSplit, agentlens_bench_split
from agentlens.process.reference import build_reference
from agentlens.process.score import score_trajectory
from agentlens.process.waste import WASTE_KINDS as WASTE
from sdk_parity import DATA, compare, load_dev, ours, released, sdk_modules

PAPER_TIERS = "paper: ideal 20.2% solid 69.1% lucky 10.7% | partial_fail 54.9% off_track 45.1%"
PAPER_T8 = {  # prevalence P/F %, mean waste P/F (spec §13.5)
    "regression_loop": (38.7, 39.5, 15.5, 12.2),
    "blind_retry": (46.0, 44.9, 5.6, 7.7),
    "redundant_step": (50.7, 47.6, 3.7, 5.3),
    "unnecessary_exploration": (6.1, 9.6, 2.0, 1.9),
    "cyclic_pattern": (33.6, 44.5, 4.6, 7.8),
}
PAPER_MECH = "paper (122 Lucky): C1 19, C2 42, C3 41, C4 5, C5 15"


def tier_line(rows: list[dict[str, Any]]) -> str:
    out = []
    for passed, tiers in (
        (True, ("ideal", "solid", "lucky")),
        (False, ("partial_fail", "off_track")),
    ):
        group = [r for r in rows if r["passed"] == passed]
        shares = (sum(r["quality_tier"] == t for r in group) / max(len(group), 1) for t in tiers)
        out.append(" ".join(f"{t} {x:.1%}" for t, x in zip(tiers, shares, strict=True)))
    return " | ".join(out) + f"  (n={len(rows)})"


def waste_table(rows: list[dict[str, Any]]) -> None:
    print(
        f"  {'type':26} {'prevP':>6} {'prevF':>6} {'wasteP':>7} {'wasteF':>7}   paper P/F prev, waste"
    )
    for kind in WASTE:
        cells = []
        for passed in (True, False):
            group = [r for r in rows if r["passed"] == passed]
            hit = [r for r in group if int(r[f"{kind}_count"]) > 0]
            mean = sum(int(r[f"{kind}_waste"]) for r in hit) / max(len(hit), 1)
            cells.append((len(hit) / max(len(group), 1) * 100, mean))
        p = PAPER_T8[kind]
        print(
            f"  {kind:26} {cells[0][0]:6.1f} {cells[1][0]:6.1f} {cells[0][1]:7.1f} {cells[1][1]:7.1f}"
            f"   {p[0]}/{p[1]}, {p[2]}/{p[3]}"
        )


def report(splits: list[TaskSplit]) -> None:
    table = DATA / "agentlens-bench-dev" / "annotations" / "trajectories.csv"
    stored = {r["trajectory_id"]: r for r in csv.DictReader(table.open())}
    ids = [t.id for s in splits for t in s.scored]
    release = [{**stored[i], "passed": stored[i]["passed"] == "True"} for i in ids]
    print(f"release stored rows, same runs (other donors): {tier_line(release)}")
    for profile in ("sdk-compat", "paper"):
        results = []
        for split in splits:
            ref = build_reference(split.donors, profile)
            results += [score_trajectory(t, ref, profile) for t in split.scored]
        rows = [r.annotation_row() for r in results]
        print(f"\n[{profile}] tiers: {tier_line(rows)}\n  {PAPER_TIERS}")
        waste_table(rows)
        mech = [r.mechanism[0] for r in results if r.mechanism]
        counts = ", ".join(f"{c} {mech.count(c)}" for c in ("C1", "C2", "C3", "C4", "C5"))
        print(f"  mechanisms ({len(mech)} Lucky): {counts}   {PAPER_MECH}")
    print("\nrelease stored rows (same runs):")
    waste_table(release)
    mech = [r for r in release if r["quality_tier"] == "lucky"]
    c1 = [
        r
        for r in mech
        if int(r["n_states"]) <= 8
        and int(r["total_wasted_steps"]) == 0
        and float(r["stage_coverage_V"]) == 0
    ]
    print(f"  stored Lucky rows {len(mech)}, C1 rule {len(c1)}")


class Clock:
    def __enter__(self) -> Clock:
        self.cpu, self.wall = time.process_time(), time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cpu = time.process_time() - self.cpu
        self.wall = time.perf_counter() - self.wall

    def __str__(self) -> str:
        return f"{self.cpu:7.3f}s cpu {self.wall:7.3f}s wall"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-sdk", action="store_true", help="time AgentLens only")
    parser.add_argument("--profile", action="store_true", help="cProfile merge + score")
    parser.add_argument("--repeat", type=int, default=3, help="best of N for merge + score")
    parser.add_argument("--report", action="store_true", help="tier shares, waste, mechanisms")
    args = parser.parse_args()
    with Clock() as load:
        by_task = load_dev(DATA)
    splits = agentlens_bench_split(by_task)
    n_traces = sum(len(v) for v in by_task.values())
    n_scored = sum(len(s.scored) for s in splits)
    print(f"dev protocol: {n_traces} traces, {len(splits)} merges, {n_scored} scored")
    print(f"agentlens load           {load}")
    best = None
    for _ in range(max(1, args.repeat)):
        with Clock() as run:
            mine = ours(splits)
        best = run if best is None or run.cpu < best.cpu else best
    assert best is not None
    print(f"agentlens merge+score    {best}   (best of {args.repeat})")
    print(f"agentlens total          {load.cpu + best.cpu:7.3f}s cpu")
    if args.profile:
        prof = cProfile.Profile()
        prof.runcall(ours, splits)
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    if args.report:
        report(splits)
    mods = None if args.no_sdk else sdk_modules()
    if mods is None:
        print("released SDK: skipped")
        return 0
    with Clock() as sdk:
        theirs = released(splits, mods)
    print(f"released SDK load+merge+score {sdk}")
    ratio_total = sdk.cpu / (load.cpu + best.cpu)
    print(f"speed-up: {ratio_total:.0f}x end to end, {sdk.cpu / best.cpu:.0f}x on merge+score")
    compare(mine, theirs, splits)
    return 0


if __name__ == "__main__":
    sys.exit(main())
