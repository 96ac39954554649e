"""Speed of process scoring on the AgentLens-Bench dev protocol, ours vs the released SDK.

Protocol (spec §14.1): load the dev traces, per task merge k=5 donors (one shared Random(42) over
file-name-sorted passing runs), score every other run of the task. Timed separately: loading, and
merge + score. The released SDK (if present at $AGENTLENS_SDK) runs the same protocol on the same
files and donors in the same process; the ratio is printed, and results are checked identical.
Times are CPU seconds of this process (robust on a shared machine) and wall seconds.

    python benchmarks/process.py [--no-sdk] [--profile] [--repeat N]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agentlens.process.protocols import agentlens_bench_split
from sdk_parity import DATA, compare, load_dev, ours, released, sdk_modules


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
