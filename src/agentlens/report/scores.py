"""Score-run records as rows, and what the report aggregates from them (per model, tier, kind).
Numbers come from the stable metrics (`process/records.py`); waste per kind from the body."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentlens.report.stats import group_by, mean, median
from agentlens.store import Record

TIERS = ("ideal", "solid", "lucky", "partial_fail", "off_track", "none")
OUTCOMES = ("passed", "failed", "unknown")
SIGNALS = ("struct", "cov", "coh", "temp")


@dataclass(frozen=True)
class ScoreRow:
    trajectory_id: str
    task_id: str
    model: str
    outcome: str
    score: float | None
    score_reason: str | None
    tier: str
    tier_reason: str | None
    mechanism: str | None
    mechanism_reason: str | None
    waste: int
    signals: dict[str, tuple[float | None, str | None]]
    waste_kinds: dict[str, tuple[int, int]] = field(default_factory=dict)
    """kind → (instances, wasted steps)."""
    truncated_at_line: int | None = None
    """Where the run's trace was cut short (scored from the lines before it); None: whole."""
    in_sample: bool = False
    """A donor of its own reference, scored against a graph built from itself."""


def score_rows(records: Sequence[Record]) -> list[ScoreRow]:
    return [_row(r) for r in records]


def _row(r: Record) -> ScoreRow:
    def value(name: str) -> float | None:
        m = r.metric(name)
        return m.value if m else None

    score, tier, mech = r.metric("score"), r.metric("tier"), r.metric("mechanism")
    kinds = _waste_kinds(r.body.get("waste"))  # the count: older calibrated records have a
    # second metric named `waste` (the share) before it
    return ScoreRow(
        trajectory_id=r.trajectory_id,
        task_id=r.task_id or "",
        model=r.model or "unknown",
        outcome=r.outcome if r.outcome in OUTCOMES else "unknown",
        score=score.value if score else None,
        score_reason=score.reason if score else None,
        tier=(tier.label if tier else None) or "none",
        tier_reason=tier.reason if tier else None,
        mechanism=mech.label if mech else None,
        mechanism_reason=mech.reason if mech else None,
        waste=sum(steps for _, steps in kinds.values()) if kinds else int(value("waste") or 0),
        signals={s: (value(s), m.reason if (m := r.metric(s)) else None) for s in SIGNALS},
        waste_kinds=kinds,
        truncated_at_line=_line(r.body.get("truncated_at_line")),
        in_sample=r.body.get("in_sample") is True,
    )


def _line(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _waste_kinds(waste: Any) -> dict[str, tuple[int, int]]:
    if not isinstance(waste, dict):
        return {}
    out = {}
    for kind, found in waste.items():
        if isinstance(found, dict):
            out[str(kind)] = (int(found.get("count") or 0), int(found.get("steps") or 0))
    return out


def pass_rate(rows: Sequence[ScoreRow]) -> float | None:
    """Passed over runs with a pass/fail label (unknown outcomes left out)."""
    labelled = [r for r in rows if r.outcome != "unknown"]
    return sum(r.outcome == "passed" for r in labelled) / len(labelled) if labelled else None


@dataclass(frozen=True)
class ModelLine:
    model: str
    runs: int
    pass_rate: float | None
    mean_score: float | None
    """Of the passing runs; None: none passed."""
    median_score: float | None
    quality_rank: int | None
    pass_rank: int | None


def model_ranking(rows: Sequence[ScoreRow]) -> list[ModelLine]:
    """Models ranked by the mean score of their passing runs, the pass-rate rank beside it (ties
    share a rank), as `cohort` ranks them (the paper's Table 2): a mean over every run would
    count each failure's low score and so mostly repeat the pass-rate order."""
    groups = group_by(rows, lambda r: r.model)
    passing = {m: [r.score for r in g if r.outcome == "passed"] for m, g in groups.items()}
    means = {m: mean(scores) for m, scores in passing.items()}
    rates = {m: pass_rate(g) for m, g in groups.items()}
    quality_rank, pass_rank = _ranks(means), _ranks(rates)
    lines = [
        ModelLine(m, len(g), rates[m], means[m], median(passing[m]), quality_rank[m], pass_rank[m])
        for m, g in groups.items()
    ]
    return sorted(lines, key=lambda line: (line.quality_rank or len(lines) + 1, line.model))


def _ranks(values: dict[str, float | None]) -> dict[str, int | None]:
    """Competition ranking (1, 1, 3): a tie shares the best place and the places it takes are
    skipped, so a rank says how many models did better. No value, no rank."""
    known = [v for v in values.values() if v is not None]
    return {k: None if v is None else 1 + sum(other > v for other in known)
            for k, v in values.items()}  # fmt: skip


def tier_outcome_counts(rows: Sequence[ScoreRow]) -> Counter[tuple[str, str]]:
    return Counter((r.tier, r.outcome) for r in rows)


def signal_means(rows: Sequence[ScoreRow]) -> dict[str, dict[str, float | None]]:
    """model → signal → mean value."""
    groups = group_by(rows, lambda r: r.model)
    return {
        m: {s: mean(r.signals[s][0] for r in g) for s in SIGNALS} for m, g in sorted(groups.items())
    }


def waste_totals(rows: Sequence[ScoreRow]) -> dict[str, tuple[int, int]]:
    """kind → (instances, wasted steps) over all rows, in the order the kinds first appear."""
    totals: dict[str, tuple[int, int]] = {}
    for row in rows:
        for kind, (count, steps) in row.waste_kinds.items():
            c, s = totals.get(kind, (0, 0))
            totals[kind] = (c + count, s + steps)
    return totals


def mechanism_counts(rows: Sequence[ScoreRow]) -> Counter[str]:
    return Counter(r.mechanism for r in rows if r.mechanism)
