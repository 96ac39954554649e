"""Judge reliability checks: self-preference between two judges of different model families
(spec §9) and the variance decomposition of the QI over repeated runs (spec §10)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agentlens.errors import ConfigError
from agentlens.jsonio import read_json
from agentlens.reviews.documents import check
from agentlens.reviews.qi import COMPONENTS

Cell = tuple[str, str]  # (task, dimension)


@dataclass
class SelfPreference:
    cells: int
    disagree: int
    self_favouring: int
    other_favouring: int
    by_dimension: dict[str, dict[str, int]]

    def to_dict(self) -> dict[str, Any]:
        """Rates over the cells both judges scored; None (n/a) when there is none."""
        n = self.cells

        def rate(count: int) -> float | None:
            return round(count / n, 4) if n else None

        return {
            "cells": self.cells,
            "disagree_rate": rate(self.disagree),
            "self_favouring_rate": rate(self.self_favouring),
            "other_favouring_rate": rate(self.other_favouring),
            "by_dimension": self.by_dimension,
        }


def self_preference(judge_1: Mapping[Cell, int], judge_2: Mapping[Cell, int]) -> SelfPreference:
    """Cross-judging: judge 1 is of agent 1's family, judge 2 of agent 2's. Scores are SxS
    scores (negative = agent 1 better). A cell where the two judges' winners differ is
    self-favouring when each judge leans to its own family relative to the other (judge 1's
    score below judge 2's), else other-favouring."""
    common = sorted(set(judge_1) & set(judge_2))
    counts = {"disagree": 0, "self": 0, "other": 0}
    by_dim: dict[str, dict[str, int]] = {}
    for cell in common:
        s1, s2 = judge_1[cell], judge_2[cell]
        dim = by_dim.setdefault(cell[1], {"cells": 0, "disagree": 0, "self": 0, "other": 0})
        dim["cells"] += 1
        if np.sign(s1) == np.sign(s2):
            continue
        kind = "self" if s1 < s2 else "other"
        for bucket in (counts, dim):
            bucket["disagree"] += 1
            bucket[kind] += 1
    return SelfPreference(len(common), counts["disagree"], counts["self"], counts["other"], by_dim)


@dataclass
class VarianceShares:
    runs: int
    qi_mean: float | None
    """None when the runs' QI is n/a (the same component missing in every run)."""
    qi_sd: float | None
    shares: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "qi_mean": None if self.qi_mean is None else round(self.qi_mean, 2),
            "qi_sd": None if self.qi_sd is None else round(self.qi_sd, 2),
            "variance_share": {k: round(v, 4) for k, v in self.shares.items()},
        }


def variance_shares(runs: Sequence[Mapping[str, float]]) -> VarianceShares:
    """Decompose Var(QI) over N repeated runs of one configuration (spec §10, unverified method):
    QI = 100 Σ_j X_j / 6, so Var(QI) = (100/6)² Σ_j Σ_k Cov(X_j, X_k); component j's share is
    Σ_k Cov(X_j, X_k) / Σ_jk Cov(X_j, X_k) (covariance attribution; shares sum to 1 and can be
    negative for a component that moves against the others). Sample (ddof = 1) statistics."""
    if len(runs) < 2:
        raise ValueError("variance analysis needs at least 2 runs")
    x = np.array([[r.get(c, 0.0) for c in COMPONENTS] for r in runs], dtype=float)
    qi = 100 * x.sum(axis=1) / 6
    cov = np.atleast_2d(np.cov(x, rowvar=False, ddof=1))
    total = cov.sum()
    shares = {c: float(cov[j].sum() / total) if total else 0.0 for j, c in enumerate(COMPONENTS)}
    return VarianceShares(len(runs), float(qi.mean()), float(qi.std(ddof=1)), shares)


def sxs_cells(doc: Mapping[str, Any]) -> dict[Cell, int]:
    """(task, dimension) → forward score from an `agentlens sxs --out` document (scored cells)."""
    return {
        (cell["task"], dim): cell["forward"]
        for dim, result in doc["dimensions"].items()
        for cell in result["cells"]
        if cell["forward"] is not None
    }


def self_preference_from_sxs(
    judge_1_doc: Mapping[str, Any], judge_2_doc: Mapping[str, Any]
) -> SelfPreference:
    """Two SxS runs of the same A/B pair, judged by a model of A's family and one of B's family."""
    return self_preference(sxs_cells(judge_1_doc), sxs_cells(judge_2_doc))


def variance_of_qi_files(paths: Sequence[str | Path]) -> VarianceShares:
    """Each component's share of Var(QI) over the `qi --json` files of N repeated runs."""
    if len(paths) < 2:
        raise ConfigError("--variance needs the `qi --json` files of at least 2 runs")
    runs, missing = [], None
    for path in paths:
        doc = read_json(path)
        check(path, doc, "qi")
        absent = [k for k, v in doc["components"].items() if v is None]
        if missing is not None and absent != missing:
            raise ConfigError(
                f"{path}: no {', '.join(absent) or 'component missing'} (the first run: "
                f"{', '.join(missing) or 'none missing'}); a component missing in some runs "
                "only is n/a there, not 0"
            )
        missing = absent
        runs.append({k: v or 0.0 for k, v in doc["components"].items()})
    shares = variance_shares(runs)
    if missing:  # the same components missing everywhere: shares of the rest, no QI
        shares.qi_mean = shares.qi_sd = None
    return shares
