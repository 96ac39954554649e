"""The released tool's nested step blocks (`asv_components`, `gold_metrics`, `quality_flags`,
`action`) added to every `steps.jsonl` row, so the authors' audit scripts, which read e.g.
`gold_metrics.gold_margin_gain` and `asv_components.bayesian_surprise_kl`, can consume our
output. The flat fields stay; the blocks repeat them under the released names (spec §2.1, §6).
"""

from __future__ import annotations

import math
from typing import Any

from agentlens.stepvalue.metrics import EPSILON


def asv_blocks(row: dict[str, Any], lam: float) -> dict[str, Any]:
    """The nested blocks of one step row (values None when the row is missing)."""
    get = row.get
    k = len(row.get("belief_before") or {})
    flags = set(row.get("flags") or [])
    return {
        "action": {"type": get("phase")},
        "asv_components": {
            "entropy_before_nats": get("entropy_before"),
            "entropy_after_nats": get("entropy_after"),
            "entropy_base": "e",
            "realized_entropy_reduction": get("delta_h"),
            "normalized_entropy_reduction": get("delta_h_normalised"),
            "bayesian_surprise_kl": get("surprise"),
            "js_pivot_score": get("pivot_js"),
            "surprise_epsilon": EPSILON,
            "num_candidates": k or None,
            "cost_scalar": get("step_cost"),
            "lambda": lam,
            "net_asv": get("net_asv"),
        },
        "gold_metrics": {
            "gold_candidate_id": get("gold_id"),
            "gold_log_likelihood_gain": _finite(get("gold_ll_gain")),
            "oracle_gold_log_likelihood_gain": get("oracle_gold_ll_gain"),
            "gold_margin_before": get("margin_before"),
            "gold_margin_after": get("margin_after"),
            "gold_margin_gain": get("g_margin"),
            "semantic_gold_gain": get("semantic_gold_gain"),
            "gold_rank_before": get("gold_rank_before"),
            "gold_rank_after": get("gold_rank_after"),
        },
        "quality_flags": {
            "evaluator_channel": get("channel"),
            "used_floor_score": "used_floor_score" in flags,
            "rationale_leakage": "rationale_leak" in flags,
            "missing_labels": "missing_labels" in flags,
        },
    }


def _finite(value: Any) -> Any:
    """The authors' gold log-likelihood gain is None when a gold belief is 0 (log 0)."""
    return value if not isinstance(value, float) or math.isfinite(value) else None
