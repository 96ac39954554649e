"""Results-store speed and size, against canonical JSONL of the same trajectories in the same run.

Run by hand:  python benchmarks/store.py [--data ../shared/data] [--repeat 3] [--postgres URL]
              [--concurrent 4]

Baselines are measured in the same run on the same trajectories (the 399 AgentLens-Bench dev
traces by default): writing them as canonical JSONL (`dump_jsonl`) and reading that file back
(`load_jsonl`). The store does more (hashing every step, deduplicating, compressing, indexing,
one transaction), so the ratios say what that costs. The baselines are timed in turns with the
store's work, so machine load falls on both. Targets: reading back within 2x of JSONL, saving
within 10x of writing JSONL (saving is once per run; JSONL writing is a bare encode), and a
store file no larger than the JSONL.

With `--postgres`, also N saves from N processes (a team, parallel CI jobs) into one database at
once against the same saves one after another, in the same processes, timed in turns: `new`, each
process saves its own tasks' trajectories (no row shared); `known`, each saves a run of records
about trajectories already stored (parallel scoring jobs); `same`, each saves all of them, new (a
save waits for the rows another has inserted until that one commits, so these stay one after
another). The ratio is the wall time one after another over the wall time at once.
"""

from __future__ import annotations

import argparse
import multiprocessing
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from agentlens.formats import read_paths
from agentlens.formats.jsonl import dump_jsonl, load_jsonl
from agentlens.store import Record, Run, open_store
from agentlens.store.records import import_records
from agentlens.trajectory import Trajectory

ROOT = Path(__file__).resolve().parents[1]
READ_TARGET, SAVE_TARGET = 2.0, 10.0


def best(repeat: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def in_turns(
    repeat: int, base: Callable[[], object], work: Callable[[], object]
) -> tuple[float, float]:
    """Best of `repeat` for each, the two timed alternately."""
    pairs = [(best(1, base), best(1, work)) for _ in range(repeat)]
    return min(p[0] for p in pairs), min(p[1] for p in pairs)


def bench(
    url_of: Callable[[int], str], trajectories: list[Trajectory], repeat: int
) -> dict[str, float]:
    jsonl = Path(tempfile.mkdtemp(prefix="agentlens-bench-store-")) / "all.jsonl"
    records = import_records(trajectories)
    runs = iter(range(10_000))

    def save() -> None:
        with open_store(url_of(next(runs))) as store:
            store.save(Run(kind="import", scorer="import/1"), trajectories, records)

    write_base, write_store = in_turns(repeat, lambda: dump_jsonl(trajectories, jsonl), save)
    url = url_of(next(runs))
    with open_store(url) as store:
        run_id = store.save(Run(kind="import", scorer="import/1"), trajectories, records)
        resave = best(
            repeat, lambda: store.save(Run(kind="import", scorer="import/1"), trajectories, records)
        )
        digests = [r.trajectory for r in store.records(run_id)]
        read_base, read_store = in_turns(
            repeat, lambda: load_jsonl(jsonl), lambda: [store.trajectory(d) for d in digests]
        )
        assert [store.trajectory(d) for d in digests] == trajectories
    size = Path(url).stat().st_size if Path(url).exists() else float("nan")
    return {
        "write_base": write_base, "write_store": write_store, "resave": resave,
        "read_base": read_base, "read_store": read_store,
        "jsonl_mb": jsonl.stat().st_size / 1e6, "store_mb": size / 1e6,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--postgres", default=None, help="Also measure this (empty) database.")
    parser.add_argument(
        "--concurrent", type=int, default=4, metavar="N",
        help="With --postgres: N saves at once against one after another (0: not measured).",
    )  # fmt: skip
    args = parser.parse_args()
    trajectories = read_paths([str(args.data / "agentlens-bench-dev")]).trajectories
    steps = sum(len(t.steps) for t in trajectories)
    folder = Path(tempfile.mkdtemp(prefix="agentlens-bench-sqlite-"))
    results = {"sqlite": bench(lambda i: str(folder / f"s{i}.db"), trajectories, args.repeat)}
    if args.postgres:
        results["postgres"] = bench(lambda i: _fresh(args.postgres, i), trajectories, args.repeat)
    table = Table(title=f"store: {len(trajectories)} trajectories, {steps} steps")
    for column in (
        "backend",
        "save s",
        "÷ jsonl",
        "resave s",
        "read s",
        "÷ jsonl",
        "MB",
        "÷ jsonl",
    ):
        table.add_column(column, justify="right")
    for name, r in results.items():
        size = f"{r['store_mb']:.1f}" if r["store_mb"] == r["store_mb"] else "-"
        table.add_row(
            name, f"{r['write_store']:.3f}", f"{r['write_store'] / r['write_base']:.2f}×",
            f"{r['resave']:.3f}", f"{r['read_store']:.3f}", f"{r['read_store'] / r['read_base']:.2f}×",
            size, f"{r['store_mb'] / r['jsonl_mb']:.2f}×" if size != "-" else "-",
        )  # fmt: skip
    console = Console()
    console.print(table)
    base = results["sqlite"]
    console.print(
        f"baseline (same run): JSONL write {base['write_base']:.3f} s, read {base['read_base']:.3f} s, "
        f"{base['jsonl_mb']:.1f} MB; targets: save ≤ {SAVE_TARGET:.0f}×, read ≤ {READ_TARGET:.0f}×"
    )
    if args.postgres and args.concurrent > 0:
        folder = str(args.data / "agentlens-bench-dev")
        concurrent = bench_concurrent(args.postgres, folder, args.concurrent, args.repeat)
        table = Table(title=f"postgres: {args.concurrent} saves from {args.concurrent} processes")
        for column in ("case", "one after another s", "at once s", "ratio", "new step rows"):
            table.add_column(column, justify="right")
        for case, (apart, together, new) in concurrent.items():
            table.add_row(case, f"{apart:.3f}", f"{together:.3f}", f"{apart / together:.2f}×",
                          f"{new:,}")  # fmt: skip
        console.print(table)


CASES = ("new", "known", "same")


def _job(trajectories: list[Trajectory], case: str, i: int, n: int) -> list[Trajectory]:
    """Process `i`'s trajectories: for `new`, every n-th task's (tasks share no step rows)."""
    if case != "new":
        return trajectories
    tasks = sorted({t.task_id or "" for t in trajectories})[i::n]
    return [t for t in trajectories if (t.task_id or "") in tasks]


def _records(trajectories: list[Trajectory], case: str) -> tuple[Run, list[Record]]:
    return Run(kind="score" if case == "known" else "import", scorer="bench/1"), import_records(
        trajectories
    )


def _save_worker(folder: str, i: int, n: int, commands: Any, replies: Any) -> None:
    """One process: reads the trajectories once, then per command opens the store, makes its
    save ready, says so, and saves when told to go."""
    trajectories = read_paths([folder]).trajectories
    while (command := commands.get()) is not None:
        url, case = command
        mine = _job(trajectories, case, i, n)
        run, records = _records(mine, case)
        with open_store(url) as store:
            replies.put(i)
            commands.get()  # go
            store.save(run, mine, records)
        replies.put((i, store.new_steps))  # closed: the next measurement may drop the database


def bench_concurrent(
    server: str, folder: str, n: int, repeat: int
) -> dict[str, tuple[float, float, int]]:
    """Per case: best wall time of the N saves one after another, and at once; the new step rows
    the saves at once reported together."""
    context = multiprocessing.get_context("spawn")
    replies = context.Queue()
    commands = [context.Queue() for _ in range(n)]
    workers = [
        context.Process(target=_save_worker, args=(folder, i, n, commands[i], replies))
        for i in range(n)
    ]
    for worker in workers:
        worker.start()
    everything = read_paths([folder]).trajectories

    def measure(case: str, at_once: bool) -> tuple[float, int]:
        url = _fresh(server, f"concurrent_{case}")
        if case == "known":
            with open_store(url) as store:
                store.save(Run(kind="import", scorer="import/1"), everything,
                           import_records(everything))  # fmt: skip
        for queue in commands:
            queue.put((url, case))
        for _ in range(n):
            replies.get(timeout=120)  # ready
        start, new = time.perf_counter(), 0
        if at_once:
            for queue in commands:
                queue.put("go")
            new = sum(replies.get(timeout=600)[1] for _ in range(n))
        else:
            for queue in commands:
                queue.put("go")
                new += replies.get(timeout=600)[1]
        return time.perf_counter() - start, new

    results = {}
    try:
        for case in CASES:
            measure(case, True)  # warm up: the server's caches, the workers' imports
            pairs = [(measure(case, False), measure(case, True)) for _ in range(repeat)]
            apart, together = min(p[0][0] for p in pairs), min(p[1][0] for p in pairs)
            results[case] = (apart, together, pairs[-1][1][1])
    finally:
        for queue in commands:
            queue.put(None)
        for worker in workers:
            worker.join(timeout=60)
        _drop(server, [f"concurrent_{case}" for case in CASES])
    return results


def _fresh(server: str, i: int | str) -> str:
    import psycopg

    name = f"agentlens_bench_{i}"
    with psycopg.connect(server, autocommit=True) as db:
        db.execute(f'DROP DATABASE IF EXISTS "{name}"')
        db.execute(f'CREATE DATABASE "{name}"')
    return server.rsplit("/", 1)[0] + "/" + name


def _drop(server: str, names: list[str]) -> None:
    import psycopg

    with psycopg.connect(server, autocommit=True) as db:
        for name in names:
            db.execute(f'DROP DATABASE IF EXISTS "agentlens_bench_{name}"')


if __name__ == "__main__":
    main()
