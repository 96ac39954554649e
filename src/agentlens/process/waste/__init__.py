"""The five waste detectors (spec §10), each localised to step indices.

All detectors read the candidate's labelled states (initial state excluded). Following the release,
regression loops, redundant steps and unnecessary exploration compare against the *first*
enumerated reference path (and the whole reference), retries and cycles against the *best* path.
`total_wasted_steps` is the plain sum of the five (not de-duplicated), as in the released table;
the token columns come from the release's de-duplicated union (see `waste.tokens`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

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
    reason = f"{rule}: {len(spans)} instance(s), {wasted} wasted step(s), {tokens} tokens"
    positions = frozenset(i for idx, _ in spans for i in idx)
    return WasteFinding(kind, len(spans), wasted, tokens, instances, reason, positions)


def detect_all(
    cand: Sequence[ProcState],
    first_path: Sequence[ProcState],
    best_path: Sequence[ProcState],
    reference_files: set[str],
) -> dict[str, WasteFinding]:
    from agentlens.process.waste.cycles import cyclic_patterns
    from agentlens.process.waste.redundant import redundant_steps
    from agentlens.process.waste.regression import regression_loops
    from agentlens.process.waste.retries import blind_retries
    from agentlens.process.waste.unnecessary import unnecessary_exploration

    return {
        "regression_loop": regression_loops(cand, first_path),
        "blind_retry": blind_retries(cand, best_path),
        "redundant_step": redundant_steps(cand, first_path),
        "unnecessary_exploration": unnecessary_exploration(cand, first_path, reference_files),
        "cyclic_pattern": cyclic_patterns(cand, best_path),
    }
