"""Per-trajectory parity of the `sdk-compat` profile with the released swe-trace-sdk.

Runs the AgentLens-Bench dev protocol (per task: k=5 donors chosen by one shared Random(42) over
the file-name-sorted passing runs; every other run scored) twice on identical inputs and donors:
with AgentLens and with the released SDK (located by $AGENTLENS_SDK, default
/work/oracle/agentlens-app/sdk; its `experiments/build_dataset.py` supplies the table's waste
columns). Prints tier identity, mean |Δscore| per task and per-column agreement. Skips cleanly
(exit 0) when the SDK is not present.

    python benchmarks/sdk_parity.py [--data DIR] [--csv OUT]
    python benchmarks/sdk_parity.py --whole-process TRAJECTORIES   # CLI vs SDK processes, CPU
    python benchmarks/sdk_parity.py --phases TRAJECTORIES          # CPU of each part of the CLI
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import math
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:  # imported where used: the SDK's own child process imports no agentlens
    from agentlens.process.protocols import TaskSplit
    from agentlens.trajectory import Trajectory

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("AGENTLENS_DATA", ROOT.parent / "shared" / "data"))
SDK = Path(os.environ.get("AGENTLENS_SDK", "/work/oracle/agentlens-app/sdk"))


def load_dev(data: Path) -> dict[str, list[Trajectory]]:
    from agentlens.formats import read_path

    by_task: dict[str, list[Trajectory]] = defaultdict(list)
    for path in sorted((data / "agentlens-bench-dev" / "trajectories").rglob("*_pta.json")):
        for traj in read_path(path):
            by_task[path.parent.name].append(traj)
    return by_task


def ours(splits: list[TaskSplit]) -> dict[str, dict[str, Any]]:
    from agentlens.process.reference import build_reference
    from agentlens.process.score import score_trajectory

    rows = {}
    for split in splits:
        ref = build_reference(split.donors, "sdk-compat")
        for traj in split.scored:
            rows[traj.id] = score_trajectory(traj, ref, "sdk-compat").annotation_row()
    return rows


def sdk_modules(sdk: Path = SDK) -> tuple[ModuleType, ModuleType, ModuleType | None] | None:
    """(trace, match, build_dataset or None), imported from the SDK's own path; None if absent."""
    if not (sdk / "src" / "swe_trace_sdk").is_dir():
        return None
    sys.path.insert(0, str(sdk / "src"))
    from swe_trace_sdk import match, trace

    builder = sdk.parent / "experiments" / "build_dataset.py"
    dataset = None
    if builder.is_file():
        spec = importlib.util.spec_from_file_location("_released_build_dataset", builder)
        assert spec and spec.loader
        dataset = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(dataset)
    return trace, match, dataset


def plain_splits(splits: list[TaskSplit]) -> list[dict[str, Any]]:
    """The splits as the released SDK needs them: file paths, outcome, model, id."""
    return [
        {
            "task": split.task_id,
            "donors": [d.source.path for d in split.donors],
            "scored": [
                {"path": t.source.path, "passed": t.outcome.status == "passed",
                 "model": t.model, "id": t.id}
                for t in split.scored
            ],
        }
        for split in splits
    ]  # fmt: skip


def released(
    splits: list[dict[str, Any]], mods: tuple[ModuleType, ModuleType, ModuleType | None]
) -> dict[str, dict[str, Any]]:
    trace, match, dataset = mods
    rows = {}
    for split in splits:
        donors = [trace.load(path, format="trace") for path in split["donors"]]
        merged = trace.merge(donors, use_llm=False)
        gt_paths = match._enumerate_paths(merged)
        gt_first = gt_paths[0] if gt_paths else []
        for run in split["scored"]:
            cand = trace.load(run["path"], format="trace")
            result = match.run(cand, merged, use_llm=False)
            report = match.quality_assessment(result, cand, merged, passed=run["passed"])
            if dataset is None:
                rows[run["id"]] = {"quality_score": report.quality_score}
                continue
            states = dataset.get_ordered_states(cand)
            entry = {"task": split["task"], "model": run["model"], "trajectory_id": run["id"],
                     "passed": run["passed"]}  # fmt: skip
            rows[run["id"]] = dataset.report_to_flat(
                report,
                result,
                entry,
                len(states),
                dataset.detect_regression_loops(states, gt_first),
                dataset.extract_blind_retries(report),
                dataset.detect_redundant_steps(states, gt_first),
                dataset.detect_unnecessary_exploration(states, gt_first, merged),
                dataset.extract_cyclic_patterns(report),
            )
    return rows


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is b
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def compare(
    mine: dict[str, dict[str, Any]], theirs: dict[str, dict[str, Any]], splits: list[dict[str, Any]]
) -> dict[str, Any]:
    from agentlens.process.result import ANNOTATION_COLUMNS

    print(f"{'task':40} {'n':>4} {'tier=':>6} {'mean|Δ|':>8}")
    tiers = deltas = n_all = 0
    column_hits: dict[str, int] = defaultdict(int)
    for split in splits:
        ids = [run["id"] for run in split["scored"]]
        t_same = sum(
            mine[i]["quality_tier"] == theirs[i].get("quality_tier", mine[i]["quality_tier"])
            for i in ids
        )
        d = sum(abs(mine[i]["quality_score"] - theirs[i]["quality_score"]) for i in ids)
        print(f"{split['task']:40} {len(ids):4} {t_same / len(ids):6.1%} {d / len(ids):8.3f}")
        tiers, deltas, n_all = tiers + t_same, deltas + d, n_all + len(ids)
        for i in ids:
            for col in ANNOTATION_COLUMNS:
                if col in theirs[i]:
                    column_hits[col] += same(mine[i][col], theirs[i][col])
    print(f"{'ALL':40} {n_all:4} {tiers / n_all:6.1%} {deltas / n_all:8.3f}")
    print("columns below 100% agreement:")
    for col in ANNOTATION_COLUMNS:
        if col in column_hits and column_hits[col] < n_all:
            print(f"  {col:32} {column_hits[col]}/{n_all}")
    identical = deltas == 0 and all(hits == n_all for hits in column_hits.values())
    return {"tier_identity": tiers / n_all, "mean_abs_delta": deltas / n_all, "n": n_all,
            "identical": identical}  # fmt: skip


def compare_stored(mine: dict[str, dict[str, Any]], data: Path) -> None:
    """Against the release's own stored rows (scored against donors that were not released)."""
    table = data / "agentlens-bench-dev" / "annotations" / "trajectories.csv"
    stored = {r["trajectory_id"]: r for r in csv.DictReader(table.open())}
    ids = [i for i in mine if i in stored]
    tiers = sum(mine[i]["quality_tier"] == stored[i]["quality_tier"] for i in ids)
    delta = sum(abs(mine[i]["quality_score"] - int(stored[i]["quality_score"])) for i in ids)
    print(
        f"vs the release's stored rows (other, unreleased donors): tier identity "
        f"{tiers}/{len(ids)} = {tiers / len(ids):.1%}, mean |Δscore| {delta / len(ids):.2f}"
    )


def whole_process(trajectories: Path) -> int:
    """The whole CLI against the released SDK, each as a child process, on the same splits:
    CPU of each process tree (RUSAGE_CHILDREN deltas) and row identity. Prints no table of
    scores: the release's held-out tasks may be timed and compared, never evaluated."""
    from agentlens.formats.stream import read_paths
    from agentlens.process.protocols import split_cohort
    from engines import COHORT, run_child

    if sdk_modules() is None:
        print(f"SKIP: released SDK not found at {SDK} (set AGENTLENS_SDK)")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        rows_path, splits_path, theirs_path = (
            Path(tmp) / n for n in ("ours.jsonl", "s.json", "t.json")
        )
        ours = run_child([sys.executable, *COHORT, str(trajectories), "--out", str(rows_path)])
        assert ours.returncode == 0, ours.stderr.decode()[-2000:]
        runs = read_paths([str(trajectories)]).trajectories
        splits = plain_splits(split_cohort(runs, "agentlens-bench"))
        splits_path.write_bytes(orjson.dumps(splits))
        theirs = run_child(
            [sys.executable, __file__, "--sdk-child", str(splits_path), str(theirs_path)]
        )
        assert theirs.returncode == 0, theirs.stderr.decode()[-2000:]
        mine = {
            r["trajectory_id"]: r for r in map(orjson.loads, rows_path.read_bytes().splitlines())
        }
        figures = compare(mine, orjson.loads(theirs_path.read_bytes()), splits)
    print(f"{len(mine)} rows, {len(splits)} tasks scored")
    print(f"CPU s (process tree): agentlens cohort {ours.cpu:.2f}, released SDK {theirs.cpu:.2f}, "
          f"ratio {theirs.cpu / ours.cpu:.1f}x; wall s {ours.wall:.2f} vs {theirs.wall:.2f}")  # fmt: skip
    print(f"rows identical to the SDK's in every column it gives: {figures['identical']}")
    return 0


def phases(trajectories: Path) -> int:
    """CPU seconds of each part of the CLI's work, done one after the other in this process with
    the garbage collector off (all 1815 runs are held at once here, which the CLI never does, and
    a full collection over them would be charged to whichever part ran into it)."""
    import gc

    gc.disable()
    start = time.process_time()
    import detect_secrets.core.plugins.util  # noqa: F401 - loaded by the first redaction
    import numpy  # noqa: F401 - loaded to score

    from agentlens import redaction
    from agentlens.engine import _codec
    from agentlens.formats import read_paths
    from agentlens.process.protocols import split_cohort
    from agentlens.process.reference import build_reference
    from agentlens.process.score import score_trajectory

    spent = {"imports": time.process_time() - start}

    def timed(part: str, work: Any) -> Any:
        begun = time.process_time()
        done = work()
        spent[part] = time.process_time() - begun
        return done

    redaction.set_enabled(True)
    runs = timed("read (as the CLI reads)", lambda: read_paths([trajectories])).trajectories
    # the same scan again, on what it already redacted: about what redaction took of the read
    redaction._redact_cached.cache_clear()
    timed("  of which redaction", lambda: [redaction.redact_trajectory(t) for t in runs])
    packed = timed("spill: pack", lambda: [_codec.pack(t) for t in runs])
    timed("spill: unpack", lambda: [_codec.unpack(data) for data in packed])
    splits = timed("split", lambda: split_cohort(runs, "agentlens-bench"))
    refs = timed("references", lambda: [build_reference(s.donors, "sdk-compat") for s in splits])
    timed("label + score + row", lambda: [score_trajectory(t, ref, "sdk-compat").annotation_row()
                                          for s, ref in zip(splits, refs, strict=True) for t in s.scored])  # fmt: skip
    for part, seconds in spent.items():
        print(f"{part:24} {seconds:6.2f} s CPU")
    total = sum(v for part, v in spent.items() if not part.startswith(" "))
    print(f"{'total':24} {total:6.2f} s CPU")
    return 0


def sdk_child(splits_path: Path, out_path: Path) -> int:
    """The released SDK alone (no agentlens import) on splits written by `whole_process`."""
    mods = sdk_modules()
    assert mods is not None
    splits = orjson.loads(splits_path.read_bytes())
    out_path.write_bytes(orjson.dumps(released(splits, mods), option=orjson.OPT_SERIALIZE_NUMPY,
                                      default=str))  # fmt: skip
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--whole-process", type=Path, metavar="TRAJECTORIES",
                        help="time the CLI and the SDK as processes on this folder of tasks")  # fmt: skip
    parser.add_argument("--phases", type=Path, metavar="TRAJECTORIES",
                        help="CPU of each part of the CLI's work, in this process")  # fmt: skip
    parser.add_argument("--sdk-child", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.sdk_child:
        return sdk_child(*args.sdk_child)
    if args.whole_process:
        return whole_process(args.whole_process)
    if args.phases:
        return phases(args.phases)
    from agentlens.process.protocols import agentlens_bench_split

    splits = agentlens_bench_split(load_dev(args.data))
    t0 = time.perf_counter()
    mine = ours(splits)
    ours_s = time.perf_counter() - t0
    compare_stored(mine, args.data)
    mods = sdk_modules()
    if mods is None:
        print(f"SKIP: released SDK not found at {SDK} (set AGENTLENS_SDK)")
        return 0
    t1 = time.perf_counter()
    theirs = released(plain_splits(splits), mods)
    t2 = time.perf_counter()
    print(f"scored {len(mine)} runs: agentlens {ours_s:.2f}s, released SDK {t2 - t1:.2f}s")
    compare(mine, theirs, plain_splits(splits))
    return 0


if __name__ == "__main__":
    sys.exit(main())
