"""Scale-out of cohort scoring: the whole dev cohort (399 traces) scored as `agentlens cohort`
does (split_cohort + score_tasks), on serial (the baseline, measured in this run), processes:2
and ray. Wall seconds; `start` is the engine's start-up (pool or local Ray), `score` the
scoring alone; results are checked identical to serial. `--task NAME` scores one task's runs
only (a cohort of one large task, which only cutting tasks into pieces can spread); `whole:`
before an engine spec keeps each task one work unit, as before tasks were cut.

    python benchmarks/engine.py [--protocol leave-one-out|agentlens-bench] [--engines serial,processes:2,ray]
    python benchmarks/engine.py --task matplotlib__matplotlib-22719 --engines serial,whole:processes:2,processes:2
"""

from __future__ import annotations

import argparse
import contextlib
import time
from pathlib import Path
from unittest import mock

from agentlens.engine import get_engine
from agentlens.formats.stream import read_paths
from agentlens.process import protocols
from agentlens.process.protocols import score_splits, split_cohort

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "agentlens-bench-dev"


def timed(spec: str, splits: list, profile: str) -> tuple[float, float, list]:
    whole = spec.startswith("whole:")
    start = time.perf_counter()
    with get_engine(spec.removeprefix("whole:")) as engine:
        ready = time.perf_counter()
        keep_whole = mock.patch.object(protocols, "piece_size", lambda n, _: n)
        with keep_whole if whole else contextlib.nullcontext():
            results = score_splits(splits, profile, engine=engine)  # type: ignore[arg-type]
        done = time.perf_counter()
    return ready - start, done - ready, [r.to_dict() for r in results]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--protocol", default="leave-one-out")
    parser.add_argument("--engines", default="serial,processes:2,ray")
    parser.add_argument("--profile", default="paper")
    parser.add_argument("--task", default=None, help="one task's runs only")
    args = parser.parse_args()
    folder = DATA / "trajectories" / (args.task or "")
    trajs = read_paths([str(folder)]).trajectories
    splits = split_cohort(trajs, args.protocol)
    print(f"{len(trajs)} traces, {len(splits)} splits ({args.protocol}, {args.profile})")
    print(f"{'engine':14} {'start s':>8} {'score s':>8} {'total s':>8} {'speed-up':>9}  same")
    base: tuple[float, list] | None = None
    for spec in args.engines.split(","):
        start, score, results = timed(spec, splits, args.profile)
        base = base or (start + score, results)
        total = start + score
        same = "yes" if results == base[1] else "NO"
        ratio = f"{base[0] / score:.2f}x / {base[0] / total:.2f}x"
        print(f"{spec:14} {start:8.2f} {score:8.2f} {total:8.2f} {ratio:>9}  {same}")
    print("speed-up: serial total / engine score, serial total / engine total (start included)")


if __name__ == "__main__":
    main()
