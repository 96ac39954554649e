"""The walks `agentlens score` makes over its runs' refs (`formats/run_table.py`), in process:
the reference's warnings, the work (each run's span and patch), the results. CPU seconds of the
three walks (best of `--repeat`), made as they were (a SQLite query a run, `RunTable.ref`, and
one more for its span) and as they are (one query a walk, `RunTable.walk`), on the runs of the
folders read into a spill first (not timed). Both give the same refs and spans (checked).

    python benchmarks/score_refs.py [FOLDER…] [--grow N] [--repeat 5]

Default: ../shared/data. `--grow N`: a corpus of N runs written to a temporary folder (removed
afterwards) by `scale.grow_corpus`, copies of the 399 dev runs, each its own run and task.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from agentlens.engine import get_engine
from agentlens.formats import read_path
from agentlens.made_sequence import MadeSequence
from agentlens.process.cohort_runs import RunSpill, SpilledRun, read_cohort, spilled_runs
from agentlens.process.pta import Reference
from agentlens.process.reference import build_reference
from agentlens.process.reference_guards import reference_warnings
from cpu_timing import best
from scale import grow_corpus

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
DEV = DATA / "agentlens-bench-dev" / "trajectories"


def per_run_queries(spill: RunSpill, reference: Reference) -> tuple[list[Any], list[Any]]:
    """The three walks as `agentlens score` made them before: a query a ref, a query a span."""
    refs = MadeSequence(spill.refs.keys, spill.table.ref)
    reference_warnings(refs, reference)
    runs = [SpilledRun(r.id, spill.files, spill.span(r), spill.patch(r)) for r in refs]
    return runs, [ref for ref, _ in zip(refs, runs, strict=True)]


def one_query_a_walk(spill: RunSpill, reference: Reference) -> tuple[list[Any], list[Any]]:
    """The same walks as `agentlens score` makes them now."""
    reference_warnings(spill.refs, reference)
    runs = spilled_runs(spill, local=True)
    return runs, [ref for ref, _ in zip(spill.refs, runs, strict=True)]


def measure(folders: list[str], repeat: int, workers: str) -> None:
    donors = [t for p in sorted(DEV.glob("psf__requests-1724/*-pass-*.json")) for t in read_path(p)]
    reference = build_reference(donors[:5], "calibrated")
    started = time.perf_counter()
    with get_engine(workers) as engine, read_cohort(folders, engine=engine) as (_, spill):
        runs = len(spill.refs)
        print(f"{runs} runs read into the spill in {time.perf_counter() - started:.0f} s")
        assert per_run_queries(spill, reference) == one_query_a_walk(spill, reference)
        before = best(lambda: per_run_queries(spill, reference), repeat)
        after = best(lambda: one_query_a_walk(spill, reference), repeat)
    print(f"three walks, CPU s (best of {repeat}): a query a run {before:.3f} "
          f"({1e6 * before / runs:.1f} µs a run), a query a walk {after:.3f} "
          f"({1e6 * after / runs:.1f} µs a run): {before / after:.1f}x")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folders", nargs="*", default=[str(DATA)])
    parser.add_argument("--grow", type=int, default=0, help="runs in a grown corpus instead")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--engine", default="serial", help="the read's engine (not timed)")
    args = parser.parse_args()
    if not args.grow:
        measure(args.folders, args.repeat, args.engine)
        return
    with tempfile.TemporaryDirectory(prefix="score-refs-") as folder:
        grow_corpus(DEV, Path(folder), 0, args.grow)
        measure([folder], args.repeat, args.engine)


if __name__ == "__main__":
    main()
