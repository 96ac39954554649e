"""SIGTERM to `agentlens cohort --engine ray` at a random moment (0-3 s) once a Ray task runs,
--runs times: how each stop ended (exit status; a Ray abort, "Tried to complete task that was
not pending", counts apart), and runs that left a process behind. `--load` adds a busy loop
per CPU for the whole measurement (a loaded machine, as a full test run makes it).

    python benchmarks/ray_stops.py [--runs 30] [--load] [--data DIR]

Run from the repository root with `PYTHONPATH=src` to measure this tree's code.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.engine.test_interrupt import MARK, marked, wait_for
from tests.engine.test_ray_sigterm import _chunk_running

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("AGENTLENS_DATA", ROOT.parent / "shared" / "data"))
ABORT = "Tried to complete task that was not pending"


def stop_once(trajectories: Path) -> str:
    """One cohort stopped by SIGTERM; how it ended."""
    mark = os.urandom(8).hex()
    command = [sys.executable, "-m", "agentlens", "cohort", str(trajectories), "--protocol",
               "agentlens-bench", "--engine", "ray", "--boot", "50"]  # fmt: skip
    proc = subprocess.Popen(command, env=os.environ | {MARK: mark}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    try:
        if not wait_for(lambda: _chunk_running(mark), 120):
            return "no Ray task started"
        time.sleep(random.uniform(0, 3))
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        left = not wait_for(lambda: not marked(mark), 60)
    finally:
        proc.kill()
        proc.wait()
        for pid in marked(mark):
            os.kill(pid, signal.SIGKILL)
    ended = "Ray abort" if ABORT in err else f"exit {proc.returncode}"
    return ended + (", processes left" if left else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--load", action="store_true")
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    busy = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(len(os.sched_getaffinity(0)) if args.load else 0)
    ]
    ends: collections.Counter[str] = collections.Counter()
    try:
        for run in range(args.runs):
            ends[stop_once(args.data / "agentlens-bench-dev" / "trajectories")] += 1
            print(f"{run + 1}/{args.runs}: {dict(ends)}", flush=True)
    finally:
        for loop in busy:
            loop.kill()
            loop.wait()


if __name__ == "__main__":
    main()
