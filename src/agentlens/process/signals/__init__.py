"""The process signals. Each returns a `Signal`: a value plus a `reason` showing its arithmetic."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Signal:
    """`value` in the signal's own unit (percent for struct/cov, 0-1 for coh/temp)."""

    name: str
    value: float
    reason: str


def ratio(num: float, den: float, scale: float = 1.0) -> float:
    return num / den * scale if den else 0.0
