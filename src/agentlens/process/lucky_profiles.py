"""What each Lucky-Pass mechanism looks like (spec §13.6): waste and length (paper Table 13),
verification (Table 17) and tokens (Table 21) per category C1-C5.

Per category over its Lucky passes: mean `total_wasted_steps`, mean `waste_severity`, % with zero
waste, mean `n_states`; runs without (V = 0) and with (V > 0) verification coverage of the
reference path (`stage_coverage_V`, the quantity the C1 rule reads); and, when the rows carry the
run's `tokens` (Σ prompt + completion over tool calls, cached included; scored rows do, the
release's CSV does not), their mean, minimum and maximum.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from agentlens.process.cohort_rows import Row, passed
from agentlens.process.profiles import ProfileConfig, get_profile

MECHANISMS = ("C1", "C2", "C3", "C4", "C5")


@dataclass(frozen=True)
class MechanismProfile:
    mechanism: str
    n: int
    mean_waste: float
    mean_severity: float
    zero_waste_percent: float
    mean_length: float
    v_zero: int
    v_positive: int
    mean_tokens: float | None
    min_tokens: int | None
    max_tokens: int | None


def mechanism_profiles(
    rows: Sequence[Row], config: ProfileConfig | None = None
) -> list[MechanismProfile]:
    """One profile per category that has Lucky passes among `rows`, in C1..C5 order."""
    groups: dict[str, list[Row]] = {}
    for row in rows:
        mech = row_mechanism(row, config)
        if mech:
            groups.setdefault(mech, []).append(row)
    return [_profile(m, groups[m]) for m in MECHANISMS if m in groups]


def row_mechanism(row: Row, config: ProfileConfig | None = None) -> str | None:
    """Lucky passes only: the stored mechanism, else the spec §11.2 tree on the released columns
    (C3 = an `incomplete_implementation` failure reason, as the column set allows)."""
    if row.get("quality_tier") != "lucky" or not passed(row):
        return None
    if row.get("mechanism"):
        return str(row["mechanism"])
    cfg = config or get_profile("sdk-compat")
    n, waste = int(row["n_states"]), int(row["total_wasted_steps"])  # type: ignore[call-overload]
    if n <= cfg.c1_max_states and waste == 0 and float(row["stage_coverage_V"]) == 0:  # type: ignore[arg-type]
        return "C1"
    if waste >= cfg.c2_min_waste:
        return "C2"
    if n >= cfg.c4_min_states:
        return "C4"
    reasons = json.loads(str(row.get("failure_reasons") or "[]"))
    return "C3" if any(r.get("reason") == "incomplete_implementation" for r in reasons) else "C5"


def _profile(mechanism: str, rows: list[Row]) -> MechanismProfile:
    n = len(rows)
    waste = [_num(r, "total_wasted_steps") for r in rows]
    v_zero = sum(1 for r in rows if _num(r, "stage_coverage_V") == 0)
    tokens = [int(_num(r, "tokens")) for r in rows if r.get("tokens") is not None]
    complete = len(tokens) == n
    return MechanismProfile(
        mechanism=mechanism,
        n=n,
        mean_waste=sum(waste) / n,
        mean_severity=sum(_num(r, "waste_severity") for r in rows) / n,
        zero_waste_percent=100.0 * sum(1 for w in waste if w == 0) / n,
        mean_length=sum(_num(r, "n_states") for r in rows) / n,
        v_zero=v_zero,
        v_positive=n - v_zero,
        mean_tokens=sum(tokens) / n if complete else None,
        min_tokens=min(tokens) if complete else None,
        max_tokens=max(tokens) if complete else None,
    )


def _num(row: Row, column: str) -> float:
    return float(row.get(column) or 0)  # type: ignore[arg-type]
