"""Cohort tables over scored runs (spec §13.3-§13.6): the per-model table, waste prevalence
(passing vs failing, Ideal vs Lucky), Lucky-Pass mechanism × model, and pass/fail separation.

Every function takes rows: mappings with the 40 AgentLens-Bench annotation columns (a release CSV
row from `read_annotation_rows`, or `result_row(ProcessResult)`, which adds the profile's own
signals `struct`/`cov`/`coh`/`temp`, `composite` and `mechanism`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentlens.process.cohort_rows import (
    SIGNALS,
    WASTE_KINDS,
    Row,
    failed,
    passed,
    read_annotation_rows,
    result_row,
    signal,
)
from agentlens.process.lucky_profiles import MechanismProfile, mechanism_profiles, row_mechanism
from agentlens.process.profiles import ProfileConfig
from agentlens.process.stats import BOOTSTRAPS, Separation, separation

__all__ = [
    "SIGNALS",
    "WASTE_KINDS",
    "Row",
    "failed",
    "passed",
    "read_annotation_rows",
    "result_row",
    "signal",
]


@dataclass(frozen=True)
class ModelRow:
    model: str
    trajectories: int
    passing: int
    unknown: int
    pass_rate: float
    pass_rank: int | None
    mean_score_passing: float
    score_rank: int | None
    rank_shift: int | None
    lucky: int
    lucky_percent: float


def model_table(rows: Sequence[Row]) -> list[ModelRow]:
    """Table 2: pass rate (of the runs with a pass/fail label) and mean score of passing runs,
    each ranked (no rank without a value); shift = pass − score rank."""
    by_model: dict[str, list[Row]] = {}
    for row in rows:
        by_model.setdefault(str(row.get("model")), []).append(row)
    stats = {m: _model_stats(rs) for m, rs in by_model.items()}
    unknown = {
        m: sum(1 for r in rs if not passed(r) and not failed(r)) for m, rs in by_model.items()
    }
    rates = {m: 100.0 * s[1] / (s[0] - unknown[m]) if s[0] > unknown[m] else float("nan")
             for m, s in stats.items()}  # fmt: skip
    pass_rank = _ranks(rates)
    score_rank = _ranks({m: s[2] for m, s in stats.items()})
    table = [
        ModelRow(
            model=m,
            trajectories=n,
            passing=n_pass,
            unknown=unknown[m],
            pass_rate=rates[m],
            pass_rank=pass_rank[m],
            mean_score_passing=mean,
            score_rank=score_rank[m],
            rank_shift=_shift(pass_rank[m], score_rank[m]),
            lucky=lucky,
            lucky_percent=100.0 * lucky / n_pass if n_pass else 0.0,
        )
        for m, (n, n_pass, mean, lucky) in stats.items()
    ]
    return sorted(table, key=lambda r: (r.score_rank is None, r.score_rank or 0, r.model))


def _model_stats(rows: Sequence[Row]) -> tuple[int, int, float, int]:
    passing = [r for r in rows if passed(r)]
    scores = [signal(r, "composite") for r in passing]
    lucky = sum(1 for r in passing if r.get("quality_tier") == "lucky")
    return len(rows), len(passing), sum(scores) / len(scores) if scores else float("nan"), lucky


def _ranks(values: Mapping[str, float]) -> dict[str, int | None]:
    """Competition ranking (1, 1, 3): tied models share a place, so a rank says how many models
    did better; NaN (no run to rate) has no rank."""
    known = [v for v in values.values() if v == v]
    return {m: 1 + sum(o > v for o in known) if v == v else None for m, v in values.items()}


def _shift(pass_rank: int | None, score_rank: int | None) -> int | None:
    return None if pass_rank is None or score_rank is None else pass_rank - score_rank


@dataclass(frozen=True)
class WasteRow:
    kind: str
    prevalence_a: float
    prevalence_b: float
    ratio: float
    waste_a: float
    waste_b: float


def waste_table(group_a: Sequence[Row], group_b: Sequence[Row]) -> list[WasteRow]:
    """Tables 8/9: % of runs with ≥ 1 instance, b/a ratio, and mean waste among runs that have one."""
    table = []
    for kind in WASTE_KINDS:
        prev_a, waste_a = _prevalence(group_a, kind)
        prev_b, waste_b = _prevalence(group_b, kind)
        ratio = prev_b / prev_a if prev_a else float("nan")
        table.append(WasteRow(kind, prev_a, prev_b, ratio, waste_a, waste_b))
    return table


def _prevalence(rows: Sequence[Row], kind: str) -> tuple[float, float]:
    hits = [r for r in rows if int(r.get(f"{kind}_count") or 0) > 0]  # type: ignore[call-overload]
    prevalence = 100.0 * len(hits) / len(rows) if rows else float("nan")
    wastes = [int(r.get(f"{kind}_waste") or 0) for r in hits]  # type: ignore[call-overload]
    return prevalence, sum(wastes) / len(wastes) if wastes else float("nan")


def tiers(rows: Sequence[Row]) -> Counter[str]:
    return Counter(str(r.get("quality_tier")) for r in rows if r.get("quality_tier"))


def mechanism_table(
    rows: Sequence[Row], config: ProfileConfig | None = None
) -> dict[str, Counter[str]]:
    """Table 14: Lucky-Pass mechanism counts per model."""
    table: dict[str, Counter[str]] = {}
    for row in rows:
        mech = row_mechanism(row, config)
        if mech:
            table.setdefault(str(row.get("model")), Counter())[mech] += 1
    return table


def c1_count(rows: Sequence[Row]) -> int:
    return sum(1 for r in rows if row_mechanism(r) == "C1")


def separation_table(
    rows: Sequence[Row],
    names: Sequence[str] = ("struct", "cov", "coh", "temp", "composite"),
    *,
    n_boot: int = BOOTSTRAPS,
    seed: int = 0,
) -> list[Separation]:
    """AUROC (bootstrap CI) and KS of each signal and of the composite, passing vs failing."""
    known = [r for r in rows if passed(r) or failed(r)]
    labels = [passed(r) for r in known]
    return [
        separation(name, [signal(r, name) for r in known], labels, n_boot=n_boot, seed=seed)
        for name in names
    ]


@dataclass(frozen=True)
class CohortReport:
    """Every cohort table for one set of scored rows."""

    n_runs: int
    tiers: dict[str, int]
    models: list[ModelRow]
    waste_pass_fail: list[WasteRow]
    waste_ideal_lucky: list[WasteRow]
    mechanisms: dict[str, dict[str, int]]
    c1: int
    separation: list[Separation]
    mechanism_profiles: list[MechanismProfile]


def cohort_report(
    rows: Sequence[Row],
    *,
    signals: Sequence[str] = ("struct", "cov", "coh", "temp", "composite", "process_only"),
    n_boot: int = BOOTSTRAPS,
    seed: int = 0,
) -> CohortReport:
    passing = [r for r in rows if passed(r)]
    failing = [r for r in rows if failed(r)]
    ideal = [r for r in passing if r.get("quality_tier") == "ideal"]
    lucky = [r for r in passing if r.get("quality_tier") == "lucky"]
    both = passing and failing
    return CohortReport(
        n_runs=len(rows),
        tiers=dict(tiers(rows)),
        models=model_table(rows),
        waste_pass_fail=waste_table(passing, failing),
        waste_ideal_lucky=waste_table(ideal, lucky),
        mechanisms={m: dict(c) for m, c in mechanism_table(rows).items()},
        c1=c1_count(rows),
        separation=separation_table(rows, signals, n_boot=n_boot, seed=seed) if both else [],
        mechanism_profiles=mechanism_profiles(rows),
    )
