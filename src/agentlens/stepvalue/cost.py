"""Cost-adjusted step value (spec §6.1): `net_asv = ΔH − λ·C(a)` with

    C = w_p·prompt_tokens/1000 + w_c·completion_tokens/1000 + w_t·tool_calls
        + w_l·latency_ms/1000 + w_r·risk_score

λ and every weight default to 0, so by default net_asv = ΔH. A component the trajectory does not
record counts only if its weight is non-zero: then net_asv is None (unknown), never a silent 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from agentlens.errors import ConfigError
from agentlens.stepvalue.model import StepCost

WEIGHT_KEYS = {
    "p": "prompt_tokens",
    "c": "completion_tokens",
    "t": "tool_calls",
    "l": "latency_ms",
    "r": "risk_score",
}
SCALE = {"p": 1000.0, "c": 1000.0, "t": 1.0, "l": 1000.0, "r": 1.0}


@dataclass(frozen=True)
class CostWeights:
    """w_p, w_c (per 1000 tokens), w_t (per tool call), w_l (per second), w_r (per risk unit)."""

    p: float = 0.0
    c: float = 0.0
    t: float = 0.0
    l: float = 0.0  # noqa: E741 - the spec's name for the latency weight
    r: float = 0.0


def parse_weights(text: str) -> CostWeights:
    """`"p=0.5,t=1"` -> CostWeights(p=0.5, t=1.0); unknown keys or bad numbers are config errors."""
    values: dict[str, float] = {}
    for part in (x.strip() for x in text.split(",")):
        if not part:
            continue
        key, sep, raw = part.partition("=")
        key = key.strip()
        if not sep or key not in WEIGHT_KEYS:
            raise ConfigError(
                f"--cost-weights: {part!r} is not KEY=NUMBER with KEY one of p, c, t, l, r "
                "(e.g. p=0.5,c=1,t=0.1,l=0.01,r=1)"
            )
        try:
            values[key] = float(raw)
        except ValueError:
            raise ConfigError(f"--cost-weights: {raw.strip()!r} is not a number ({part})") from None
        if not math.isfinite(values[key]):
            raise ConfigError(f"--cost-weights: {raw.strip()} is not a finite number ({part})")
    return CostWeights(**values)


def finite_lambda(lam: float) -> float:
    """λ as given; a NaN or infinite λ would turn every net_asv into NaN or ±inf."""
    if not math.isfinite(lam):
        raise ConfigError(f"--lambda: {lam} is not a finite number")
    return lam


@dataclass(frozen=True)
class NetValue:
    cost: float | None
    net_asv: float | None
    reason: str


def step_cost(cost: StepCost, weights: CostWeights) -> tuple[float | None, str]:
    """C(a) and its arithmetic; None when a weighted component is not recorded."""
    terms, missing = [], []
    total = 0.0
    for key, field_name in WEIGHT_KEYS.items():
        weight = getattr(weights, key)
        if weight == 0:
            continue
        value = getattr(cost, field_name)
        if value is None:
            missing.append(field_name)
            continue
        total += weight * value / SCALE[key]
        scale = f"/{SCALE[key]:g}" if SCALE[key] != 1 else ""
        terms.append(f"{weight:g}·{value:g}{scale}")
    if missing:
        return None, f"C unknown: {', '.join(missing)} not recorded"
    return total, f"C = {' + '.join(terms) or '0'} = {total:.4f}"


def net_value(delta_h: float, cost: StepCost, lam: float, weights: CostWeights) -> NetValue:
    """`net_asv = ΔH − λ·C` with the arithmetic in `reason`."""
    c, c_reason = step_cost(cost, weights)
    if lam == 0:
        return NetValue(c, delta_h, f"net_asv = ΔH − 0·C = {delta_h:.4f} (λ = 0; {c_reason})")
    if c is None:
        return NetValue(None, None, f"net_asv unknown: λ = {lam:g} but {c_reason}")
    net = delta_h - lam * c
    return NetValue(
        c, net, f"net_asv = {delta_h:.4f} − {lam:g}·{c:.4f} = {net:.4f} (ΔH − λ·C; {c_reason})"
    )
