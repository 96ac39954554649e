"""Redundant steps: re-reading (E) a file already read since the last implementation step, unless
the reference's first path also reads that file at least twice."""

from __future__ import annotations

from collections.abc import Sequence

from agentlens.process.states import ProcState
from agentlens.process.waste.finding import WasteFinding, finding


def redundant_steps(cand: Sequence[ProcState], first_path: Sequence[ProcState]) -> WasteFinding:
    reads: dict[str, int] = {}
    for s in first_path:
        if s.stage == "E" and s.file_path:
            reads[s.file_path] = reads.get(s.file_path, 0) + 1
    multi = {f for f, n in reads.items() if n >= 2}
    seen: set[str] = set()
    spans: list[tuple[list[int], str]] = []
    for i, s in enumerate(cand):
        if s.stage == "I":
            seen.clear()
        elif s.stage == "E" and s.file_path:
            if s.file_path not in multi and s.file_path in seen:
                spans.append(([i], f"re-read {s.file_path}"))
            seen.add(s.file_path)
    return finding("redundant_step", cand, spans, "E on a file already explored since the last I")
