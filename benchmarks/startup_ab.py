"""`agentlens --help` start-up of two source trees, alternated so that the machine's load falls
on both alike: the CPU of each run (`getrusage`), bytecode cached as in an install; min and
median in ms. Run it with one tree twice to see the noise.

    python benchmarks/startup_ab.py BEFORE/src AFTER/src [--runs 31]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

PROBE = """import resource, runpy, sys
sys.argv = ["agentlens", "--help"]
try:
    runpy.run_module("agentlens", run_name="__main__")
except SystemExit:
    pass
usage = resource.getrusage(resource.RUSAGE_SELF)
sys.stderr.write(f"CPU {usage.ru_utime + usage.ru_stime}\\n")
"""


def cpu_ms(src: str, cache: str) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env |= {"PYTHONPATH": src, "PYTHONPYCACHEPREFIX": cache}
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True)
    return float(done.stderr.rsplit("CPU ", 1)[1]) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--runs", type=int, default=31)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as caches:
        trees = {"before": args.before, "after": args.after}
        places = {tag: os.path.join(caches, tag) for tag in trees}
        for tag, src in trees.items():
            cpu_ms(src, places[tag])  # compiles: the runs below find the bytecode cached
        times: dict[str, list[float]] = {tag: [] for tag in trees}
        for run in range(args.runs):
            for tag in trees if run % 2 == 0 else reversed(trees):
                times[tag].append(cpu_ms(trees[tag], places[tag]))
    for tag, found in times.items():
        print(f"{tag}: CPU ms min {min(found):.1f} median {statistics.median(found):.1f}")


if __name__ == "__main__":
    main()
