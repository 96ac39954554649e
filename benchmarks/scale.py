"""Throughput and peak memory of whole commands as the corpus grows: 10k and 100k trajectories.

Run by hand:  python benchmarks/scale.py [--data ../shared/data] [--sizes 10000 100000]
                                          [--million] [--commands inspect store-import cohort]
              python benchmarks/scale.py --largest [--data ../shared/data]

The corpus is grown from the 399 real AgentLens-Bench dev traces: copy N of trace T is written as
`copyN/<task>/scale-bench-copyN-<name>` with `metadata.task_name` rewritten to
`scale-bench-copyN-<task>` inside the file, so every copy is its own trajectory (own id, own task:
grouping by task sees as many tasks as copies). It is written under a temporary folder (or
`--workdir`), removed afterwards unless `--keep`: a benchmark corpus, never committed.

Throughput is traces per CPU second of the child (user + system), which a machine shared with
other work does not skew as much as wall time (both are printed). Each command runs as its own
process (`python -m agentlens …`, output to /dev/null); its peak
resident memory is that child's own `ru_maxrss` from `os.wait4` (not RUSAGE_CHILDREN, which
is the largest of all children so far). The baseline, measured in the same run, is the same
command on the 399 real traces; `agentlens formats` gives the floor (the interpreter and the
imports). Targets: peak at 100k < 1 GiB, and flat: peak(100k) / peak(10k) < 1.3.

One function per command (`COMMANDS`): to add one, write a function giving its argv for a
corpus folder and a scratch folder, and add it to `COMMANDS`.

`--largest` grows no corpus: it finds the largest file under `--data` a reader claims and prints
by how much reading it (`read_path`, in a fresh process, the reader's import included) raises
that process's peak RSS, and that as a multiple of the file's size (docs/security.md, the input
size cap).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
GIB = 1024**3
PEAK_TARGET = 1 * GIB
FLAT_TARGET = 1.3
TASK_NAME = re.compile(rb'("task_name"\s*:\s*")([^"]*)(")')
# Run as a fresh process, so the read's peak is its own. VmHWM, not ru_maxrss: a child's ru_maxrss
# starts at its parent's RSS at the fork (Linux keeps it across exec), which hid 5 MiB of the read.
READ_PEAK = r"""
import re, sys
from pathlib import Path
from agentlens.formats.load import read_path

def peak():
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) * 1024

before = peak()
read_path(sys.argv[1])
print(peak() - before)
"""


def inspect_argv(corpus: Path, scratch: Path) -> list[str]:
    return ["inspect", "--json", str(corpus)]


def store_import_argv(corpus: Path, scratch: Path) -> list[str]:
    store = scratch / f"store-{time.monotonic_ns()}.db"
    return ["store", "import", "--store", f"sqlite:///{store}", str(corpus)]


def cohort_argv(corpus: Path, scratch: Path) -> list[str]:
    """Scored and written to a file, no tables (the tables keep one row per run, by design)."""
    out = scratch / f"rows-{time.monotonic_ns()}.jsonl"
    return [
        "cohort",
        "--protocol",
        "agentlens-bench",
        "--no-tables",
        "--out",
        str(out),
        str(corpus),
    ]


COMMANDS: dict[str, Callable[[Path, Path], list[str]]] = {
    "inspect": inspect_argv,
    "store-import": store_import_argv,
    "cohort": cohort_argv,
}


@dataclass
class Measure:
    seconds: float
    cpu_seconds: float
    peak_bytes: int
    code: int


def run_agentlens(argv: list[str]) -> Measure:
    """One whole `python -m agentlens` process: wall time and its own peak RSS."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    command = [sys.executable, "-m", "agentlens", *argv]
    start = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    assert child.stderr is not None
    error = child.stderr.read().decode(errors="replace").strip()
    if child.returncode:
        print(f"  {' '.join(argv[:2])}: exit {child.returncode}: {error[-300:]}", file=sys.stderr)
    cpu = usage.ru_utime + usage.ru_stime
    return Measure(seconds, cpu, usage.ru_maxrss * 1024, child.returncode)


def grow_corpus(source: Path, target: Path, start: int, stop: int) -> None:
    """Write copies `start` to `stop` (exclusive) of the traces under `source`, cycling through
    them, each with its own file name and task name (growing keeps the copies made before)."""
    traces = sorted(p for p in source.rglob("*.json") if p.is_file())
    originals = [(p.parent.name, p.name, p.read_bytes()) for p in traces]
    for n in range(start, stop):
        copy, (task, name, data) = n // len(originals), originals[n % len(originals)]
        folder = target / f"copy{copy}" / task
        folder.mkdir(parents=True, exist_ok=True)
        prefix = f"scale-bench-copy{copy}-"
        renamed = TASK_NAME.sub(
            lambda m, p=prefix.encode(): m.group(1) + p + m.group(2) + m.group(3), data, count=1
        )
        (folder / f"{prefix}{name}").write_bytes(renamed)


def measure_sizes(args: argparse.Namespace, work: Path) -> dict[str, dict[int, Measure]]:
    dev = args.data / "agentlens-bench-dev" / "trajectories"
    scratch = work / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[int, Measure]] = {name: {} for name in args.commands}
    results["formats (floor)"] = {0: run_agentlens(["formats"])}
    for name in args.commands:
        results[name][399] = run_agentlens(COMMANDS[name](dev, scratch))
    written = 0
    corpus = work / "corpus"
    for size in sorted(args.sizes):
        started = time.perf_counter()
        grow_corpus(dev, corpus, written, size)
        written = size
        print(f"corpus of {size} written in {time.perf_counter() - started:.0f} s", flush=True)
        for name in args.commands:
            results[name][size] = run_agentlens(COMMANDS[name](corpus, scratch))
            m = results[name][size]
            print(
                f"  {name} {size}: {m.seconds:.0f} s ({m.cpu_seconds:.0f} s CPU), "
                f"peak {m.peak_bytes / 2**20:.0f} MiB",
                flush=True,
            )
    return results


def report(results: dict[str, dict[int, Measure]], sizes: list[int]) -> bool:
    table = Table(title="scale: whole processes, peak RSS from wait4 (ru_maxrss of the child)")
    columns = ("command", "traces", "wall s", "CPU s", "traces/CPU s", "peak MiB", "÷ 399 peak")
    for column in columns:
        table.add_column(column, justify="right")
    floor = results.pop("formats (floor)")[0]
    table.add_row(
        "formats (floor)", "-", f"{floor.seconds:.1f}", f"{floor.cpu_seconds:.1f}", "-",
        _mib(floor.peak_bytes), "-",
    )  # fmt: skip
    ok = True
    for name, by_size in results.items():
        base = by_size[399].peak_bytes
        for size, m in sorted(by_size.items()):
            rate = f"{size / m.cpu_seconds:.0f}" if m.cpu_seconds else "-"
            ratio = f"{m.peak_bytes / base:.2f}×"
            table.add_row(
                name, str(size), f"{m.seconds:.1f}", f"{m.cpu_seconds:.1f}", rate,
                _mib(m.peak_bytes), ratio,
            )  # fmt: skip
            ok &= m.code == 0
        ok &= _check(name, by_size, sizes)
    Console().print(table)
    return ok


def _check(name: str, by_size: dict[int, Measure], sizes: list[int]) -> bool:
    big, small = max(sizes), min(sizes)
    peak, flat = by_size[big].peak_bytes, by_size[big].peak_bytes / by_size[small].peak_bytes
    verdict = peak < PEAK_TARGET and (big == small or flat < FLAT_TARGET)
    print(
        f"{name}: peak at {big} = {_mib(peak)} MiB (target < {PEAK_TARGET // 2**20} MiB); "
        f"peak {big} / peak {small} = {flat:.2f} (target < {FLAT_TARGET}): "
        f"{'ok' if verdict else 'MISSED'}"
    )
    return verdict


def largest_trace(data: Path) -> Path | None:
    """The largest file under `data` whose first bytes a reader claims."""
    # imported here: a child's peak RSS from wait4 starts at this process's, so it stays small
    from agentlens.errors import TraceError
    from agentlens.formats.load import iter_trace_paths
    from agentlens.formats.registry import HEAD_BYTES, detect

    files = sorted((path for path, _ in iter_trace_paths([data])), key=_size, reverse=True)
    for path in files:
        with path.open("rb") as handle:
            head = handle.read(HEAD_BYTES)
        try:
            detect(path, head)
        except TraceError:
            continue
        return path
    return None


def _size(path: Path) -> int:
    return path.stat().st_size


def read_peak_bytes(path: Path) -> int:
    """By how much reading `path` raises a fresh process's peak RSS."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    command = [sys.executable, "-c", READ_PEAK, str(path)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return int(done.stdout)


def report_largest(data: Path) -> bool:
    path = largest_trace(data)
    if path is None:
        print(f"no trace under {data}", file=sys.stderr)
        return False
    size, peak = _size(path), read_peak_bytes(path)
    print(
        f"largest trace: {path.relative_to(data)} ({size / 2**20:.1f} MiB); reading it raised "
        f"the peak RSS of a fresh process by {peak / 2**20:.1f} MiB, {peak / size:.1f}x the file"
    )
    return True


def _mib(count: int) -> str:
    return f"{count / 2**20:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--million", action="store_true", help="Also 1,000,000 trajectories.")
    parser.add_argument("--commands", nargs="+", choices=list(COMMANDS), default=list(COMMANDS))
    parser.add_argument("--workdir", type=Path, default=None, help="Where the corpus goes.")
    parser.add_argument("--keep", action="store_true", help="Keep the corpus afterwards.")
    parser.add_argument(
        "--largest", action="store_true", help="Only the read peak of the largest trace."
    )
    args = parser.parse_args()
    if args.largest:
        sys.exit(0 if report_largest(args.data) else 1)
    args.sizes = sorted(set(args.sizes) | ({1_000_000} if args.million else set()))
    work = Path(tempfile.mkdtemp(prefix="agentlens-scale-", dir=args.workdir))
    print(
        f"corpus under {work} ({os.cpu_count()} CPUs; disk: {shutil.disk_usage(work).free // GIB} GiB free)"
    )
    try:
        ok = report(measure_sizes(args, work), args.sizes)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
