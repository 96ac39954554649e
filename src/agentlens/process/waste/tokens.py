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
from dataclasses import dataclass

from agentlens.list_text import counted
from agentlens.process.states import ProcState


@dataclass(frozen=True)
class SdkWaste:
    """The release SDK's wasted steps by rule and the tokens of their union: the
    `wasted_input_tokens` / `wasted_output_tokens` columns. The per-kind findings (`*_waste`
    columns) follow the detectors' rules, so the two can disagree: 0 wasted steps there, tokens
    here."""

    repeats: int
    """Retry- and cycle-excess positions (the same findings as the detectors')."""
    redundant: int
    unnecessary: int
    steps: int
    input_tokens: int
    output_tokens: int

    @property
    def reason(self) -> str:
        return (
            "the release SDK's inefficiency rules, not the detectors' of `waste`: retry and "
            f"cycle excess {self.repeats} ∪ redundant (unmatched, with the (tool, file) of a "
            f"matched step within ±3) {self.redundant} ∪ unnecessary (post-implementation E "
            f"where the best path has none at that share of the run) {self.unnecessary} = "
            f"{counted(self.steps, 'step')}: {self.input_tokens:,} input + "
            f"{self.output_tokens:,} output tokens"
        )


def sdk_waste(
    cand: Sequence[ProcState],
    full_cand: Sequence[ProcState],
    alignment: Sequence[int],
    best_path: Sequence[ProcState],
    retries_and_cycles: frozenset[int],
) -> tuple[SdkWaste, set[int]]:
    """The release's wasted steps, counted by rule, and their union: indices into `cand`
    (labelled states). `alignment` is per `full_cand` (initial included); `retries_and_cycles`
    are the blind-retry and cyclic-pattern findings' positions."""
    redundant = sdk_redundant(cand, full_cand, alignment)
    unnecessary = sdk_unnecessary(cand, best_path)
    wasted = set(retries_and_cycles) | redundant | unnecessary
    tokens_in, tokens_out = wasted_tokens(cand, wasted)
    counts = (len(retries_and_cycles), len(redundant), len(unnecessary), len(wasted))
    return SdkWaste(*counts, tokens_in, tokens_out), wasted


def sdk_redundant(
    cand: Sequence[ProcState], full_cand: Sequence[ProcState], alignment: Sequence[int]
) -> set[int]:
    matched = {
        k: (full_cand[k].tool, full_cand[k].file_path) for k, g in enumerate(alignment) if g >= 0
    }
    out = set()
    for i, s in enumerate(cand):
        sig = (s.tool, s.file_path)
        if i in matched or sig == ("", ""):
            continue
        for k in range(i - 3, i + 4):
            if matched.get(k) == sig:
                out.add(i)
                break
    return out


def sdk_unnecessary(cand: Sequence[ProcState], best_path: Sequence[ProcState]) -> set[int]:
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
