"""Cyclic patterns: a block of 2-4 (tool|file|stage) signatures repeated back-to-back ≥ 2 times;
repetitions after the first are wasted. Blocks of one repeated signature (retries) and blocks that
also cycle in the best reference path are skipped."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from agentlens.process.states import ProcState
from agentlens.process.waste.finding import WasteFinding, finding


def sig(s: ProcState) -> str:
    return f"{s.tool}|{s.file_path}|{s.stage}"


def find_cycles(states: Sequence[ProcState]) -> list[tuple[int, int, int, tuple[str, ...]]]:
    """(start, pattern length, repetitions, pattern) scanning lengths 2, 3, 4 in turn."""
    return cycles_of(tuple(sig(s) for s in states))


@lru_cache(maxsize=256)
def cycles_of(sigs: tuple[str, ...]) -> list[tuple[int, int, int, tuple[str, ...]]]:
    n, found = len(sigs), []
    for plen in (2, 3, 4):
        i = 0
        while i <= n - 2 * plen:
            if sigs[i] != sigs[i + plen]:  # cannot repeat here; skip building the tuples
                i += 1
                continue
            pattern = tuple(sigs[i : i + plen])
            reps, j = 1, i + plen
            while j + plen <= n and tuple(sigs[j : j + plen]) == pattern:
                reps, j = reps + 1, j + plen
            if reps >= 2:
                found.append((i, plen, reps, pattern))
                i = j
            else:
                i += 1
    return found


def cyclic_patterns(cand: Sequence[ProcState], best_path: Sequence[ProcState]) -> WasteFinding:
    allowed = {c[3] for c in find_cycles(best_path)}
    spans = [
        (list(range(start + plen, start + plen * reps)), f"{plen}-step cycle ×{reps}")
        for start, plen, reps, pattern in find_cycles(cand)
        if pattern not in allowed and len(set(pattern)) > 1
    ]
    return finding("cyclic_pattern", cand, spans, "2-4 step block repeated, excess p·(reps − 1)")
