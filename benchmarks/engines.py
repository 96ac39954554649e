"""The engines as a user meets them: `agentlens cohort` run as a child process per engine, on the
AgentLens-Bench protocol (sdk-compat). For each engine: wall seconds (best of --repeat), CPU
seconds of the whole process tree (RUSAGE_CHILDREN before/after each child: the command and
every worker it reaped), peak RSS of the command, parallel efficiency (serial wall / (workers
× wall)), overhead (wall − serial wall / workers), whether its rows and stdout are
byte-identical to serial's, and the processes left in its process group once it has exited.

Tables are never printed (`--no-tables`): the release's held-out tasks may be timed, never
evaluated. `cohort_scale` (`--scale`) gives peak RSS against the number of tasks scored.

    python benchmarks/engines.py [--data DIR] [--engines serial,processes:2,ray] [--repeat 3]
    python benchmarks/engines.py --scale [--data DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.process_group import in_group

ROOT = Path(__file__).resolve().parents[1]
RELEASE = Path("/work/oracle/agentlens-app/agentlens-bench/trajectories")
DEV = Path(os.environ.get("AGENTLENS_DATA", ROOT.parent / "shared" / "data"))
DEV = DEV / "agentlens-bench-dev" / "trajectories"
COHORT = ["-m", "agentlens", "cohort", "--protocol", "agentlens-bench", "--profile", "sdk-compat",
          "--no-tables"]  # fmt: skip


@dataclass(frozen=True)
class Child:
    wall: float
    cpu: float
    """User + system seconds of the child and of every descendant it waited for."""
    max_rss_kb: int
    returncode: int
    stdout: bytes
    stderr: bytes
    left: list[int]
    """Pids still in the child's process group after it exited."""


def run_child(argv: list[str], env: dict[str, str] | None = None) -> Child:
    """Run `argv` in its own process group; its CPU from RUSAGE_CHILDREN deltas."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **(env or {})}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env, start_new_session=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        left = in_group(proc.pid)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        out.seek(0), err.seek(0)
        stdout, stderr = out.read(), err.read()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Child(wall, cpu, usage.ru_maxrss, proc.returncode, stdout, stderr, left)


def cohort(data: list[Path], engine: str, out: Path) -> Child:
    out.unlink(missing_ok=True)
    argv = [sys.executable, *COHORT, *map(str, data), "--engine", engine, "--out", str(out)]
    child = run_child(argv)
    if child.returncode not in (0, 1):  # 1: some runs failed, and were named
        raise SystemExit(f"{engine}: exit {child.returncode}: {child.stderr.decode()[-2000:]}")
    return child


def workers(engine: str) -> int:
    name, _, arg = engine.partition(":")
    if name == "serial":
        return 1
    if arg.isdigit():
        return int(arg)
    return len(os.sched_getaffinity(0))


def compare_engines(data: Path, engines: list[str], repeat: int) -> None:
    tasks = sorted(p for p in data.iterdir() if p.is_dir())
    print(f"{data}: {len(tasks)} tasks; load average {os.getloadavg()[0]:.1f}; best of {repeat}")
    print(f"{'engine':14} {'wall s':>7} {'cpu s':>7} {'RSS MB':>7} {'effic.':>7} "
          f"{'overhead s':>10}  same  left")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        base: tuple[float, bytes, bytes] | None = None
        for engine in engines:
            out = Path(tmp) / f"{engine.replace(':', '_')}.jsonl"
            runs = [cohort([data], engine, out) for _ in range(repeat)]
            best = min(runs, key=lambda c: c.wall)
            rows = out.read_bytes()
            base = base or (best.wall, rows, best.stdout)
            n = workers(engine)
            efficiency = base[0] / (n * best.wall)
            overhead = best.wall - base[0] / n
            same = "yes" if (rows, best.stdout) == base[1:] else "NO"
            left = sum(len(c.left) for c in runs)
            print(f"{engine:14} {best.wall:7.2f} {best.cpu:7.2f} {best.max_rss_kb / 1024:7.0f} "
                  f"{efficiency:7.0%} {overhead:10.2f}  {same:4}  {left}")  # fmt: skip
    print("efficiency = serial wall / (workers x wall); overhead = wall - serial wall / workers;")
    print("left = processes found in the command's process group after it exited (all runs)")


def cohort_scale(data: Path, engine: str = "serial") -> list[tuple[int, int, float, int]]:
    """(tasks, runs scored, CPU s, peak RSS KB) for the first 1, 2, 4, … tasks, then all."""
    tasks = sorted(p for p in data.iterdir() if p.is_dir())
    tasks = tasks[1:] + tasks[:1]  # both sets start with astropy, too few passing runs to score
    counts = sorted({min(2**i, len(tasks)) for i in range(len(tasks).bit_length() + 1)})
    figures = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rows.jsonl"
        for count in counts:
            child = cohort(tasks[:count], engine, out)
            rows = len(out.read_bytes().splitlines())
            figures.append((count, rows, child.cpu, child.max_rss_kb))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=RELEASE if RELEASE.is_dir() else DEV)
    parser.add_argument("--engines", default="serial,processes:2,ray")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--scale", action="store_true", help="peak RSS against tasks scored")
    args = parser.parse_args()
    if args.scale:
        print(f"{'tasks':>5} {'rows':>6} {'cpu s':>7} {'peak RSS MB':>12}")
        for count, rows, cpu, rss in cohort_scale(args.data):
            print(f"{count:5} {rows:6} {cpu:7.2f} {rss / 1024:12.0f}")
        return
    compare_engines(args.data, args.engines.split(","), args.repeat)


if __name__ == "__main__":
    main()
