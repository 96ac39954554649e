"""The five waste detectors (spec §10), each localised to step indices.

All detectors read the candidate's labelled states (initial state excluded). Following the release,
regression loops, redundant steps and unnecessary exploration compare against the *first*
enumerated reference path (and the whole reference), retries and cycles against the *best* path.
`total_wasted_steps` is the plain sum of the five (not de-duplicated), as in the released table;
the token columns come from the release's de-duplicated union (see `waste.tokens`).
"""

from __future__ import annotations

from collections.abc import Sequence

from agentlens.process.states import ProcState
from agentlens.process.waste.cycles import cyclic_patterns
from agentlens.process.waste.finding import WASTE_KINDS, Instance, WasteFinding, finding
from agentlens.process.waste.redundant import redundant_steps
from agentlens.process.waste.regression import regression_loops
from agentlens.process.waste.retries import blind_retries
from agentlens.process.waste.unnecessary import unnecessary_exploration

__all__ = ["WASTE_KINDS", "Instance", "WasteFinding", "detect_all", "finding"]


def detect_all(
    cand: Sequence[ProcState],
    first_path: Sequence[ProcState],
    best_path: Sequence[ProcState],
    reference_files: set[str],
) -> dict[str, WasteFinding]:
    return {
        "regression_loop": regression_loops(cand, first_path),
        "blind_retry": blind_retries(cand, best_path),
        "redundant_step": redundant_steps(cand, first_path),
        "unnecessary_exploration": unnecessary_exploration(cand, first_path, reference_files),
        "cyclic_pattern": cyclic_patterns(cand, best_path),
    }
