"""The released score's other inputs (spec §6, §7.6): workflow similarity (LCS of stage letters)
and per-stage coverage of the best path (stage completeness, weighted score, bottleneck)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentlens.process.signals import Signal
from agentlens.process.states import ProcState

STAGE_WEIGHTS = {"I": 3.0, "V": 2.0, "E": 1.0, "O": 0.5}


def lcs(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence, bit-parallel (Hyyrö 2004): O(len(a)) big-int ops."""
    masks: dict[str, int] = {}
    for i, y in enumerate(b):
        masks[y] = masks.get(y, 0) | (1 << i)
    full = (1 << len(b)) - 1
    v = full
    for x in a:
        u = v & masks.get(x, 0)
        v = ((v + u) | (v - u)) & full
    return len(b) - v.bit_count()


def workflow_similarity(cand: Sequence[str], reference: Sequence[str]) -> Signal:
    a, b = [s for s in cand if s], [s for s in reference if s]
    if not a and not b:
        return Signal("workflow", 1.0, "both stage sequences empty → 1")
    if not a or not b:
        return Signal("workflow", 0.0, "one stage sequence empty → 0")
    n = lcs(a, b)
    value = n / max(len(a), len(b))
    return Signal("workflow", value, f"LCS {n} / max({len(a)}, {len(b)}) = {value:.3f}")


@dataclass(frozen=True)
class StageCoverage:
    total: dict[str, int]
    matched: dict[str, int]

    def percent(self, stage: str) -> float:
        total = self.total.get(stage, 0)
        return self.matched.get(stage, 0) / total * 100.0 if total else 0.0

    @property
    def completeness(self) -> float:
        present = [s for s, n in self.total.items() if n > 0]
        if not present:
            return 1.0
        return sum(1 for s in present if self.matched.get(s, 0) > 0) / len(present)

    @property
    def weighted(self) -> float:
        num = sum(STAGE_WEIGHTS.get(s, 0.5) * self.matched.get(s, 0) for s in self.total)
        den = sum(STAGE_WEIGHTS.get(s, 0.5) * n for s, n in self.total.items())
        return num / den * 100.0 if den > 0 else 0.0

    def weighted_signal(self) -> Signal:
        """`weighted` (0-1) with its sum: weight·matched over weight·states, stage by stage."""
        stages = sorted(self.total, key=lambda s: (-STAGE_WEIGHTS.get(s, 0.5), s))
        if not stages:
            return Signal("weighted", 0.0, "no labelled best-path states → 0")
        weight = {s: f"{STAGE_WEIGHTS.get(s, 0.5):g}" for s in stages}
        num = sum(STAGE_WEIGHTS.get(s, 0.5) * self.matched.get(s, 0) for s in stages)
        den = sum(STAGE_WEIGHTS.get(s, 0.5) * self.total[s] for s in stages)
        hits = " + ".join(f"{weight[s]}·{self.matched.get(s, 0)} {s}" for s in stages)
        totals = " + ".join(f"{weight[s]}·{self.total[s]} {s}" for s in stages)
        value = self.weighted / 100
        return Signal(
            "weighted",
            value,
            f"best-path states matched, stage-weighted: ({hits}) / ({totals}) = "
            f"{num:g}/{den:g} = {value:.4f}",
        )

    @property
    def bottleneck(self) -> float:
        return min((self.percent(s) for s in self.total), default=0.0)

    def completeness_signal(self) -> Signal:
        present = sorted(s for s, n in self.total.items() if n > 0)
        hit = [s for s in present if self.matched.get(s, 0) > 0]
        value = self.completeness
        return Signal(
            "stage_completeness", value, f"stages matched {hit} of {present} = {value:.3f}"
        )


def stage_coverage(path: Sequence[ProcState], pairs: Sequence[int]) -> StageCoverage:
    total: dict[str, int] = {}
    matched: dict[str, int] = {}
    for state, j in zip(path, pairs, strict=True):
        if not state.stage:
            continue
        total[state.stage] = total.get(state.stage, 0) + 1
        if j >= 0:
            matched[state.stage] = matched.get(state.stage, 0) + 1
    return StageCoverage(total, matched)
