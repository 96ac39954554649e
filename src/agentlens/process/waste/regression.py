"""Regression loops: I → … → a run of ≥ 2 non-I states starting at an E → I, unless the reference's
first path regresses (E→I→…→E) at the proportional position."""

from __future__ import annotations

from collections.abc import Sequence

from agentlens.process.states import ProcState
from agentlens.process.waste.finding import WasteFinding, finding


def reference_regressions(stages: Sequence[str]) -> set[int]:
    found = set()
    for i in range(1, len(stages) - 1):
        if stages[i] == "I" and stages[i - 1] == "E":
            for j in range(i + 1, len(stages)):
                if stages[j] in ("E", "I"):
                    if stages[j] == "E":
                        found.add(j)
                    break
    return found


def regression_loops(cand: Sequence[ProcState], first_path: Sequence[ProcState]) -> WasteFinding:
    ref = [s.stage for s in first_path]
    allowed = reference_regressions(ref)
    stages = [s.stage for s in cand]
    n, i = len(stages), 0
    spans: list[tuple[list[int], str]] = []
    while i < n:
        if stages[i] == "I":
            j = next((k for k in range(i + 1, n) if stages[k] == "E"), n)
            if j >= n:
                break
            k = next((m for m in range(j, n) if stages[m] == "I"), n)
            if k - j >= 2 and k < n:
                g = int(j / n * len(ref)) if ref else -1
                if not ref or g not in allowed:
                    spans.append((list(range(j, k)), f"back to exploration for {k - j} steps"))
                i = k
                continue
        i += 1
    return finding("regression_loop", cand, spans, "I → E-run (≥ 2) → I not in the reference")
