"""Secret redaction's cost on the read path, and a check that its prefilter changes nothing.

Run by hand:  python benchmarks/redaction.py [--data ../shared/data] [--repeat 3] [--check]

Times reading the 399 AgentLens-Bench dev traces end to end (`read_paths`: disk, detection,
sidecar labels) with redaction on and off (`AGENTLENS_NO_REDACT=1` does the same), in turns in
the same run, best of `--repeat`, and prints the overhead ratio. Target: on < 2 s, ideally < 1 s.

`--check` reads every file under `--data` unredacted and compares, trajectory by trajectory, the
fast pass (`redact_trajectory`: one JSON encoding, an Aho-Corasick needle scan, only hit strings
checked) with the reference pass (`redact_walk`: `redact_text` on every string), printing how
many trajectories and strings each redacted and any difference (exit 1 on one).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import msgspec

from agentlens import redaction
from agentlens.formats import read_paths
from agentlens.trajectory import Trajectory

DATA = Path(
    os.environ.get("AGENTLENS_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)


def timed_read(folder: Path, redact: bool) -> tuple[float, float]:
    """Wall and CPU seconds (CPU time is what a busy shared machine does not inflate)."""
    redaction.set_enabled(redact)
    redaction._redact_cached.cache_clear()  # each run pays for its own checks
    wall, cpu = time.perf_counter(), time.process_time()
    result = read_paths([folder])
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert result.trajectories and not result.failures, result.failures[:3]
    return wall, cpu


def overhead(folder: Path, repeat: int) -> None:
    times: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    for _ in range(repeat):
        for redact in (False, True):
            times[redact].append(timed_read(folder, redact))
    for what, at in (("wall", 0), ("CPU", 1)):
        on, off = min(t[at] for t in times[True]), min(t[at] for t in times[False])
        print(f"read {folder.name} ({what}): redaction on {on:.2f} s, off {off:.2f} s, "
              f"ratio {on / off:.2f}x")  # fmt: skip


def reference(trajectory: Trajectory) -> Trajectory:
    plain = msgspec.to_builtins(trajectory)
    cleaned = redaction.redact_walk(plain)
    return trajectory if cleaned == plain else msgspec.convert(cleaned, Trajectory)


def check(data: Path) -> int:
    """Differences between the fast and the reference pass over every trajectory under `data`."""
    redaction.set_enabled(False)
    trajectories = read_paths([data]).trajectories
    redaction.set_enabled(True)
    differ = redacted = 0
    marks = 0
    for trajectory in trajectories:
        fast, slow = redaction.redact_trajectory(trajectory), reference(trajectory)
        encoded = msgspec.json.encode(fast)
        if encoded != msgspec.json.encode(slow):
            differ += 1
            print(f"DIFFERS: {trajectory.source.path}", file=sys.stderr)
        if fast is not trajectory:
            redacted += 1
            marks += encoded.count(b"[REDACTED:")
    print(f"check {data}: {len(trajectories)} trajectories, {redacted} redacted "
          f"({marks} marks), {differ} differ from the reference pass")  # fmt: skip
    return differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    overhead(args.data / "agentlens-bench-dev" / "trajectories", args.repeat)
    if args.check and check(args.data):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
