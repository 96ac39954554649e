"""Which processes a command left behind: shared by the engine tests and `benchmarks/engines.py`."""

from __future__ import annotations

from pathlib import Path


def in_group(pgid: int) -> list[int]:
    """Pids of live (not zombie) processes in process group `pgid`."""
    pids = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            pids.append(int(proc.name))
    return pids
