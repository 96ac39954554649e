"""Φ_coh, trajectory coherence, paper Eq. (2) with ε = 0 (spec §7.4).

Consecutive labelled stages (order E=0, I=1, V=2, O=3) form transitions: into O from a non-O stage
is a confirm, same stage a deepen, forward a pivot, anything else (O→E/I/V included) a backtrack.
coh = (pivots + confirms) / (pivots + confirms + backtracks) × (1 − min(retries / |T|, 1)); the
progress ratio is 1 when there are no directed transitions, and coh is 1 with no transitions.
Retries: each maximal run of L ≥ 3 consecutive states with the same (tool, file, stage) adds L − 2.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from agentlens.process.signals import Signal
from agentlens.process.states import ProcState

ORDER = {"E": 0, "I": 1, "V": 2, "O": 3}


def classify(a: str, b: str) -> str:
    if b == "O" and a != "O":
        return "confirm"
    oa, ob = ORDER.get(a, -1), ORDER.get(b, -1)
    if oa == ob:
        return "deepen"
    return "pivot" if ob > oa else "backtrack"


def transitions(stages: Sequence[str]) -> list[str]:
    labelled = [s for s in stages if s]
    return [classify(a, b) for a, b in itertools.pairwise(labelled)]


def signature(state: ProcState) -> tuple[str, str, str]:
    return (state.tool, state.file_path, state.stage)


def retry_excess(states: Sequence[ProcState]) -> int:
    """Σ (L − 2) over maximal runs of length L ≥ 3 of one non-empty (tool, file, stage)."""
    excess, run = 0, 1
    for prev, cur in itertools.pairwise(states):
        sig = signature(cur)
        if sig == signature(prev) and sig != ("", "", ""):
            run += 1
            excess += run >= 3
        else:
            run = 1
    return excess


def coherence_value(pivots: int, confirms: int, backtracks: int, retries: int, n: int) -> float:
    """Eq. (2) with ε = 0 from the counts over `n` transitions (1.0 when n = 0)."""
    if not n:
        return 1.0
    directed = pivots + confirms + backtracks
    progress = (pivots + confirms) / directed if directed else 1.0
    return progress * (1.0 - min(retries / n, 1.0))


def coherence(states: Sequence[ProcState]) -> Signal:
    kinds = transitions([s.stage for s in states])
    if not kinds:
        return Signal("coh", 1.0, "fewer than two labelled states → 1.00")
    p, c, b = kinds.count("pivot"), kinds.count("confirm"), kinds.count("backtrack")
    d = len(kinds) - p - c - b
    progress = (p + c) / (p + c + b) if p + c + b else 1.0
    retries = retry_excess(states)
    value = coherence_value(p, c, b, retries, len(kinds))
    reason = (
        f"({p} pivots + {c} confirms) / ({p} + {c} + {b} backtracks) = {progress:.3f}; "
        f"× (1 − {retries} retries / {len(kinds)} transitions) [{d} deepen] = {value:.3f}"
    )
    return Signal("coh", value, reason)
