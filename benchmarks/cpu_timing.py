"""The CPU timer the benchmarks share: run by hand as `python benchmarks/<name>.py`, whose own
folder is then first on `sys.path`, so a benchmark imports this module as `cpu_timing`."""

from __future__ import annotations

import time
from collections.abc import Callable


def best(work: Callable[[], object], repeat: int) -> float:
    """The fewest CPU seconds (this process's) `work` took over `repeat` calls: the least
    disturbed by the other work on a shared machine."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return min(times)
