"""Self-preference counting and the QI variance decomposition, on hand-made inputs."""

from __future__ import annotations

import numpy as np
import pytest

from agentlens.reviews.reliability import self_preference, variance_shares


def test_self_preference_counts() -> None:
    # Judge 1 belongs to agent 1's family, judge 2 to agent 2's. Negative = agent 1 better.
    j1 = {
        ("t1", "EndResult"): -2,
        ("t2", "EndResult"): 1,
        ("t3", "Pleasantness"): -1,
        ("t4", "Pleasantness"): 0,
    }
    j2 = {
        ("t1", "EndResult"): 3,
        ("t2", "EndResult"): -1,
        ("t3", "Pleasantness"): -2,
        ("t4", "Pleasantness"): 0,
    }
    result = self_preference(j1, j2).to_dict()
    # t1: signs differ, j1 favours A1 (its own family) -> self; t2: j1 favours A2 -> other;
    # t3, t4: same sign -> agree.
    assert (
        result["cells"],
        result["disagree_rate"],
        result["self_favouring_rate"],
        result["other_favouring_rate"],
    ) == (4, 0.5, 0.25, 0.25)
    assert result["by_dimension"]["EndResult"] == {"cells": 2, "disagree": 2, "self": 1, "other": 1}


def test_variance_shares() -> None:
    base = {
        "EndResult": 0.7,
        "InstructionCompliance": 0.6,
        "Pitfalls": 0.5,
        "Pleasantness": 0.7,
        "ToolCalls": 0.6,
    }
    runs = [{**base, "Formal": f} for f in (0.7, 0.75, 0.8)]
    only_formal = variance_shares(runs)
    assert only_formal.shares["Formal"] == pytest.approx(1.0)
    assert only_formal.qi_sd == pytest.approx(100 * np.std([0.7, 0.75, 0.8], ddof=1) / 6)
    runs = [{**base, "Formal": f, "Pitfalls": p} for f, p in ((0.7, 0.4), (0.8, 0.5), (0.75, 0.6))]
    shares = variance_shares(runs).shares
    assert sum(shares.values()) == pytest.approx(1.0)
    x = np.array([[0.7, 0.4], [0.8, 0.5], [0.75, 0.6]])
    cov = np.cov(x, rowvar=False)
    assert shares["Formal"] == pytest.approx(cov[0].sum() / cov.sum())
    with pytest.raises(ValueError):
        variance_shares(runs[:1])


def test_self_preference_from_sxs_documents() -> None:
    from agentlens.reviews.reliability import self_preference_from_sxs

    def doc(scores):
        return {
            "dimensions": {
                "ToolCalls": {"cells": [{"task": t, "forward": s} for t, s in scores.items()]}
            }
        }

    result = self_preference_from_sxs(
        doc({"a": -2, "b": 1, "c": None}), doc({"a": 1, "b": 2, "c": 3})
    )
    assert (result.cells, result.disagree, result.self_favouring) == (2, 1, 1)
