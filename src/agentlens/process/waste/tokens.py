"""Wasted tokens as the released table computes them (spec §10, last part): the de-duplicated union
of the release SDK's own inefficiency indices — retry excess, cycle excess, its *different*
redundant rule (an unmatched step with the same (tool, file) as a matched step within ±3) and its
*different* unnecessary rule (post-implementation E where the proportional best-path index has no
post-implementation E) — summed over prompt and completion tokens separately.

The release mixes two index spaces in the redundant rule (alignment positions count the initial
state, the scan does not); that off-by-one is kept for parity.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentlens.process.states import ProcState
from agentlens.process.waste.cycles import find_cycles
from agentlens.process.waste.retries import runs


def sdk_wasted_indices(
    cand: Sequence[ProcState],
    full_cand: Sequence[ProcState],
    alignment: Sequence[int],
    best_path: Sequence[ProcState],
) -> set[int]:
    """Indices into `cand` (labelled states). `alignment` is per `full_cand` (initial included)."""
    from agentlens.process.signals.coherence import signature

    wasted: set[int] = set()
    allowed_runs = {signature(best_path[s]) for s, _ in runs(best_path)}
    for s, e in runs(cand):
        if signature(cand[s]) not in allowed_runs:
            wasted.update(range(s + 2, e))
    allowed_cycles = {c[3] for c in find_cycles(best_path)}
    for start, plen, reps, pattern in find_cycles(cand):
        if pattern not in allowed_cycles and len(set(pattern)) > 1:
            wasted.update(range(start + plen, start + plen * reps))
    wasted |= _redundant(cand, full_cand, alignment)
    wasted |= _unnecessary(cand, best_path)
    return wasted


def _redundant(
    cand: Sequence[ProcState], full_cand: Sequence[ProcState], alignment: Sequence[int]
) -> set[int]:
    matched = {
        k: (full_cand[k].tool, full_cand[k].file_path) for k, g in enumerate(alignment) if g >= 0
    }
    out = set()
    for i, s in enumerate(cand):
        if i in matched or (s.tool, s.file_path) == ("", ""):
            continue
        if any(matched.get(i + d) == (s.tool, s.file_path) for d in range(-3, 4)):
            out.add(i)
    return out


def _unnecessary(cand: Sequence[ProcState], best_path: Sequence[ProcState]) -> set[int]:
    started, allowed = False, set[int]()
    for gi, g in enumerate(best_path):
        started = started or g.stage == "I"
        if started and g.stage == "E":
            allowed.add(gi)
    out: set[int] = set()
    started = False
    for i, s in enumerate(cand):
        started = started or s.stage == "I"
        if started and s.stage == "E" and best_path:
            gi = min(int(i / max(len(cand), 1) * len(best_path)), len(best_path) - 1)
            if gi not in allowed:
                out.add(i)
    return out


def wasted_tokens(cand: Sequence[ProcState], indices: set[int]) -> tuple[int, int]:
    return (
        sum(cand[i].input_tokens for i in indices),
        sum(cand[i].output_tokens for i in indices),
    )
