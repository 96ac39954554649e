"""What the failed-step rule's verdict cache costs: the memory it holds when full of distinct
CJK/emoji results (the worst case for its keys), and `failed` over every step of ../shared/data
cold (empty cache) and warm (the judge's compaction asking again at each rendering):

    PYTHONPATH=src python benchmarks/step_failure_cache.py
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from pathlib import Path

from agentlens import step_failure
from agentlens.formats.stream import read_paths
from agentlens.step_failure import READ_CHARS, failed
from agentlens.trajectory import Step

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
ENTRIES = 4096


def clear() -> None:
    step_failure._verdicts.clear()


def wide_steps() -> list[Step]:
    """Distinct results and commands at the lengths the cache keeps, in 4-byte characters."""
    text = "错误🙂" * (READ_CHARS // 2)
    command = "echo " + "🙂" * 4000
    return [
        Step(index=i, kind="tool", command=f"{i} {command}", observation=f"{i} {text}")
        for i in range(ENTRIES)
    ]


def cache_bytes() -> int:
    """What stays allocated once the steps are gone: the cache's keys and verdicts."""
    clear()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for step in wide_steps():
        failed(step)
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    held = sum(s.size_diff for s in after.compare_to(before, "filename"))
    clear()
    return held


def timed(steps: list[Step]) -> float:
    start = time.perf_counter()
    for step in steps:
        failed(step)
    return time.perf_counter() - start


def main() -> None:
    print(f"cache full of {ENTRIES} distinct CJK/emoji steps holds {cache_bytes() / 1e6:.1f} MB")
    trajs = read_paths([DATA]).trajectories
    runs = [[s for s in t.steps if s.is_error is None] for t in trajs]
    clear()
    cold = sum(timed(steps) for steps in runs)
    warm = sum(timed(steps) for steps in runs)  # the last trajectory's steps are still cached
    clear()
    again = 0.0
    for steps in runs:  # each trajectory asked twice in a row, as a rendering asks again
        timed(steps)
        again += timed(steps)
    print(
        f"failed() over {sum(map(len, runs))} unflagged steps of {len(trajs)} trajectories: "
        f"cold {cold:.3f} s, all again {warm:.3f} s, each trajectory again at once {again:.3f} s"
    )


if __name__ == "__main__":
    main()
