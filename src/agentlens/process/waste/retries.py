"""Blind retries: maximal runs of ≥ 3 consecutive states with the same (tool, file, stage); the
excess beyond two is wasted. Runs whose signature also forms a ≥ 3 run in the best reference path
are task requirements, not waste."""

from __future__ import annotations

from collections.abc import Sequence

from agentlens.process.signals.coherence import signature
from agentlens.process.states import ProcState
from agentlens.process.waste.finding import WasteFinding, finding


def runs(states: Sequence[ProcState]) -> list[tuple[int, int]]:
    """(start, end-exclusive) of maximal runs of length ≥ 3 of one non-empty signature."""
    sigs = [signature(s) for s in states]
    out, start = [], 0
    for i in range(1, len(sigs) + 1):
        if i < len(sigs) and sigs[i] == sigs[i - 1] and sigs[i] != ("", "", ""):
            continue
        if i - start >= 3:
            out.append((start, i))
        start = i
    return out


def blind_retries(cand: Sequence[ProcState], best_path: Sequence[ProcState]) -> WasteFinding:
    allowed = {signature(best_path[s]) for s, _ in runs(best_path)}
    spans = [
        (list(range(s + 2, e)), f"{cand[s].tool} on {cand[s].file_path or '-'} ×{e - s}")
        for s, e in runs(cand)
        if signature(cand[s]) not in allowed
    ]
    return finding(
        "blind_retry", cand, spans, "same (tool, file, stage) ≥ 3 in a row, excess L − 2"
    )
