"""What every waste detector returns: the kinds, one finding and its instances."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agentlens.list_text import counted
from agentlens.process.states import ProcState

WASTE_KINDS = (
    "regression_loop",
    "blind_retry",
    "redundant_step",
    "unnecessary_exploration",
    "cyclic_pattern",
)
"""The five kinds, in the released column order."""


@dataclass(frozen=True)
class Instance:
    """One occurrence: the wasted steps (indices into `Trajectory.steps`)."""

    steps: tuple[int, ...]
    detail: str


@dataclass(frozen=True)
class WasteFinding:
    kind: str
    count: int
    wasted_steps: int
    wasted_tokens: int
    instances: tuple[Instance, ...] = field(default_factory=tuple)
    reason: str = ""
    positions: frozenset[int] = frozenset()
    """Wasted positions among the candidate's labelled states (for de-duplicated unions)."""


def finding(
    kind: str, cand: Sequence[ProcState], spans: list[tuple[list[int], str]], rule: str
) -> WasteFinding:
    """Build a finding from (wasted candidate positions, detail) pairs."""
    instances = tuple(Instance(tuple(cand[i].step_index for i in idx), d) for idx, d in spans)
    wasted = sum(len(idx) for idx, _ in spans)
    tokens = sum(cand[i].input_tokens + cand[i].output_tokens for idx, _ in spans for i in idx)
    reason = f"{rule}: {counted(len(spans), 'instance')}, {counted(wasted, 'wasted step')}, "
    reason += f"{counted(tokens, 'token')} by the detector's rule (`{kind}_waste`), not the SDK's "
    reason += "of `wasted_tokens`"
    positions = frozenset(i for idx, _ in spans for i in idx)
    return WasteFinding(kind, len(spans), wasted, tokens, instances, reason, positions)
