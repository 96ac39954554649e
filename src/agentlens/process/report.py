"""The release's other report fields (spec §11.4): a per-stage comparison with the best reference
path and the quality signals derived from it. Reporting only: no score, tier or mechanism reads
them.

* Stage comparison, per stage: path states expected / matched / missing, candidate states in the
  stage that the step alignment left unmatched ("extra"), and the effort ratio = candidate states
  in the stage / path states in the stage (0 when the path has none). The release's "ordering
  preserved" compares matched path positions in path order, so it is always true; kept as is.
* Quality signals (type, severity, evidence), the task outcome deciding "passed" / "failed" (the
  verdict when the outcome is unknown): an inefficient path despite success (passed, wasted > 20%
  of the candidate's states or coherence < 0.5), missing (failed) or low (otherwise) verification
  (V coverage < 25%), a stage order that differs, excessive exploration (E effort > 2), missing
  planning (no O state of the path matched), a clean ideal pass, incomplete coverage (failed,
  coverage ≥ 40%, stage completeness ≥ 0.5) or low reference coverage (passed, coverage < 70%).
  Waste here is the release's de-duplicated inefficiency union (see `waste.tokens`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentlens.list_text import counted
from agentlens.process.signals.workflow import StageCoverage
from agentlens.process.states import ProcState

if TYPE_CHECKING:
    from agentlens.process.match import MatchResult

STAGES: tuple[tuple[str, str], ...] = (
    ("E", "exploration"),
    ("I", "implementation"),
    ("V", "verification"),
    ("O", "orchestration"),
)


@dataclass(frozen=True)
class StageComparison:
    expected: int
    matched: int
    missing: int
    extra: int
    ordering_preserved: bool
    effort_ratio: float


@dataclass(frozen=True)
class QualitySignal:
    signal_type: str
    severity: str
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Inefficiency:
    """The release's inefficiency counts: retry runs, cycles, its redundant and unnecessary
    steps, and the de-duplicated wasted steps."""

    retry_loops: int
    cyclic_patterns: int
    redundant_steps: int
    unnecessary_explorations: int
    total_wasted_steps: int


def release_report(
    outcome: str,
    verdict: str,
    m: MatchResult,
    states: Sequence[ProcState],
    stages: StageCoverage,
    coherence: float,
    waste: Inefficiency,
    stage_order_match: bool,
) -> dict[str, Any]:
    """`stage_comparison` and `quality_signals` of one scored run (initial state first in
    `states`); an unknown outcome takes the verdict's side, as the release does."""
    assert m.best is not None
    comparison = stage_comparison(m.best.path, m.best.pairs, states, m.alignment)
    unknown = outcome == "unknown"
    found = quality_signals(
        passed=outcome == "passed" or (unknown and verdict in ("PASS", "LIKELY PASS")),
        failed=outcome == "failed" or (unknown and verdict in ("FAIL", "LIKELY FAIL")),
        coherence=coherence,
        coverage=m.best.coverage,
        completeness=stages.completeness,
        n_candidate=len(states),
        waste=waste,
        stages=stages,
        comparison=comparison,
        stage_order_match=stage_order_match,
    )
    return {"stage_comparison": comparison, "quality_signals": found}


def stage_comparison(
    path: Sequence[ProcState],
    pairs: Sequence[int],
    cand: Sequence[ProcState],
    alignment: Sequence[int],
) -> dict[str, StageComparison]:
    """`pairs[i]`: candidate index matched to path state i or -1; `alignment[j]`: path index of
    candidate state j or -1 (both include the initial state)."""
    out = {}
    for letter, _ in STAGES:
        expected = [i for i, s in enumerate(path) if s.stage == letter]
        matched = [i for i in expected if pairs[i] >= 0]
        in_stage = [j for j, c in enumerate(cand) if c.stage == letter]
        extra = [j for j in in_stage if alignment[j] < 0]
        effort = len(in_stage) / len(expected) if expected else 0.0
        ordered = all(a < b for a, b in itertools.pairwise(matched))
        out[letter] = StageComparison(
            len(expected), len(matched), len(expected) - len(matched), len(extra), ordered, effort
        )
    return out


def quality_signals(
    *,
    passed: bool,
    failed: bool,
    coherence: float,
    coverage: float,
    completeness: float,
    n_candidate: int,
    waste: Inefficiency,
    stages: StageCoverage,
    comparison: dict[str, StageComparison],
    stage_order_match: bool,
) -> list[QualitySignal]:
    """`passed`/`failed`: the task outcome (or, when unknown, the verdict's side)."""
    out = []
    ratio = waste.total_wasted_steps / max(n_candidate, 1)
    if passed and waste.total_wasted_steps > 0 and (ratio > 0.2 or coherence < 0.5):
        out.append(
            QualitySignal("inefficient_path_despite_success", "warning", _waste(waste, coherence))
        )
    v_total, v_matched = stages.total.get("V", 0), stages.matched.get("V", 0)
    if v_total > 0 and stages.percent("V") < 25:
        kind, severity = (
            ("missing_verification", "critical") if failed else ("low_verification", "warning")
        )
        out.append(QualitySignal(kind, severity, (f"V coverage {v_matched}/{v_total}",)))
    if not stage_order_match:
        out.append(QualitySignal("stage_order_differs", "critical" if failed else "info", ()))
    explore = comparison.get("E")
    if explore is not None and explore.effort_ratio > 2.0:
        detail = f"E effort {explore.effort_ratio:.1f}×, {counted(explore.extra, 'extra step')}"
        out.append(QualitySignal("excessive_exploration", "warning", (detail,)))
    if stages.total.get("O", 0) > 0 and stages.matched.get("O", 0) == 0:
        detail = f"{counted(stages.total['O'], 'O state')} in the path, none matched"
        out.append(QualitySignal("missing_planning", "info", (detail,)))
    clean = coherence >= 0.7 and coverage >= 70 and completeness >= 0.75
    if passed and clean and waste.total_wasted_steps == 0:
        out.append(QualitySignal("clean_ideal_pass", "info", (f"coverage {coverage:.0f}%",)))
    if failed and coverage >= 40 and completeness >= 0.5:
        out.append(QualitySignal("incomplete_coverage", "warning", _reached(coverage, stages)))
    elif passed and coverage < 70:
        out.append(QualitySignal("low_gt_coverage", "info", (f"coverage {coverage:.0f}%",)))
    return out


def _waste(waste: Inefficiency, coherence: float) -> tuple[str, ...]:
    parts = [
        (waste.retry_loops, "retry loop(s)"),
        (waste.cyclic_patterns, "cyclic pattern(s)"),
        (waste.redundant_steps, "redundant step(s)"),
        (waste.unnecessary_explorations, "unnecessary exploration(s)"),
    ]
    evidence = [f"{n} {what}" for n, what in parts if n]
    if coherence < 0.5:
        evidence.append(f"coherence {coherence:.2f}")
    return tuple(evidence)


def _reached(coverage: float, stages: StageCoverage) -> tuple[str, ...]:
    evidence = [f"coverage {coverage:.0f}%"]
    for letter, word in reversed(STAGES):
        if stages.matched.get(letter, 0) > 0:
            evidence.append(f"reached {word} ({stages.matched[letter]}/{stages.total[letter]})")
            break
    return tuple(evidence)
