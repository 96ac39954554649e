"""Ingest speed per format, against a bare `orjson.loads` of the same bytes in the same run.

Run by hand:  python benchmarks/ingest.py [--data ../shared/data] [--repeat 5]

For each format (the shared files grouped by the format `detect` picks) it times our reader on
bytes already in memory and the bare parse of the same bytes (per line for JSONL, per member for
`.eval` zips), best of `--repeat` (the two run in turns), and prints MB/s, the ratio, and `µs/step`:
what the reader spends per step beyond the bare parse (on formats with few bytes per step this,
not the parse, decides the ratio). Targets: reading all 399 AgentLens-Bench dev traces end to end
(disk, detection, sidecar labels) in < 2 s, and at most 2.5x the bare parse for the large
single-document JSON formats.

It reads with whatever the imported package runs (the first line says which modules are compiled,
`agentlens/compiled.py`): to measure the compiled build of a source tree, build it in place first
(`python setup.py build_ext --inplace`, then delete the built `src/**/*.so` to measure pure
Python again).
"""

from __future__ import annotations

import argparse
import io
import time
import zipfile
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import orjson
from rich.console import Console
from rich.table import Table

from agentlens import compiled
from agentlens.errors import TraceError
from agentlens.formats import read_paths
from agentlens.formats.load import HEAD_BYTES, iter_trace_paths
from agentlens.formats.registry import detect
from agentlens.shell import categories

ROOT = Path(__file__).resolve().parents[1]
LARGE_JSON = {"agentlens-bench", "swe-agent", "mini-swe-agent", "openhands-events", "inspect-ai"}
BENCH_TARGET_S = 2.0
RATIO_TARGET = 2.5


def bare_parse(path: Path, data: bytes) -> None:
    if data[:4] == b"PK\x03\x04":
        with zipfile.ZipFile(io.BytesIO(data)) as zipped:
            for name in zipped.namelist():
                if name.endswith(".json"):
                    orjson.loads(zipped.read(name))
    elif path.suffix == ".jsonl":
        for line in data.splitlines():
            if line.strip():
                orjson.loads(line)
    else:
        orjson.loads(data)


def clear_caches() -> None:
    """Empty the command-classification caches (its `lru_cache`s), so repeats do not flatter the
    readers."""
    for value in vars(categories).values():
        if hasattr(value, "cache_clear"):
            value.cache_clear()


def best_of(
    repeat: int, work: Callable[[], object], setup: Callable[[], object] | None = None
) -> float:
    """Best wall time of `work`; `setup` runs before each repeat, outside the timing."""
    times = []
    for _ in range(repeat):
        if setup is not None:
            setup()
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def best_of_pair(
    repeat: int, ours: Callable[[], object], bare: Callable[[], object]
) -> tuple[float, float]:
    """Best times of the two, run in turns: on a shared machine a burst of load then slows both
    alike, rather than whichever happened to run during it."""
    ours_times, bare_times = [], []
    for _ in range(repeat):
        ours_times.append(best_of(1, ours, setup=clear_caches))
        bare_times.append(best_of(1, bare))
    return min(ours_times), min(bare_times)


def group_by_format(data_dir: Path) -> dict[str, list[tuple[Path, bytes]]]:
    groups: dict[str, list[tuple[Path, bytes]]] = defaultdict(list)
    for path, _ in iter_trace_paths([data_dir]):
        data = path.read_bytes()
        try:
            reader = detect(path, data[:HEAD_BYTES])
        except TraceError:
            continue
        groups[reader.name].append((path, data))
    return groups


def measure(groups: dict[str, list[tuple[Path, bytes]]], repeat: int) -> Table:
    table = Table(
        "format", "files", "MB", "steps", "ours MB/s", "orjson MB/s", "µs/step", "ratio", "target"
    )
    for name, files in sorted(groups.items()):
        reader = detect(*_head(files[0]))(lenient=True)  # type: ignore[call-arg]
        mb = sum(len(d) for _, d in files) / 1e6

        def ours(reader: object = reader, files: list[tuple[Path, bytes]] = files) -> None:
            for path, data in files:
                list(reader.read(path, data))  # type: ignore[attr-defined]

        def bare(files: list[tuple[Path, bytes]] = files) -> None:
            for path, data in files:
                bare_parse(path, data)

        t_ours, t_bare = best_of_pair(repeat, ours, bare)
        ratio = t_ours / t_bare
        steps = sum(len(t.steps) for p, d in files for t in reader.read(p, d))  # type: ignore[attr-defined]
        beyond_parse = (t_ours - t_bare) / max(steps, 1) * 1e6
        target = ""
        if name in LARGE_JSON:
            target = "ok" if ratio <= RATIO_TARGET else f"MISSED (> {RATIO_TARGET}x)"
        table.add_row(
            name,
            str(len(files)),
            f"{mb:.2f}",
            str(steps),
            f"{mb / t_ours:.0f}",
            f"{mb / t_bare:.0f}",
            f"{beyond_parse:.1f}",
            f"{ratio:.2f}x",
            target,
        )
    return table


def _head(item: tuple[Path, bytes]) -> tuple[Path, bytes]:
    return item[0], item[1][:HEAD_BYTES]


def bench_dev_seconds(bench: Path, repeat: int) -> tuple[float, int]:
    count = 0

    def run() -> None:
        nonlocal count
        count = len(read_paths([bench / "trajectories"]).trajectories)

    return best_of(repeat, run, setup=clear_caches), count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    console = Console(width=120)
    console.print(f"build: {compiled.status()}")
    groups = group_by_format(args.data)
    console.print(measure(groups, args.repeat))
    seconds, count = bench_dev_seconds(args.data / "agentlens-bench-dev", args.repeat)
    verdict = "ok" if seconds < BENCH_TARGET_S else "MISSED"
    console.print(
        f"AgentLens-Bench dev: {count} traces read end to end in {seconds:.2f} s "
        f"(best of {args.repeat}; target < {BENCH_TARGET_S:.0f} s: {verdict})"
    )


if __name__ == "__main__":
    main()
