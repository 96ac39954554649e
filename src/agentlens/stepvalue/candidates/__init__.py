"""Candidate sources: an explicit `asv.v1` file, fault localisation, or the run's outcome."""

from __future__ import annotations

from agentlens.stepvalue.candidates.coding import coding_transitions
from agentlens.stepvalue.candidates.explicit import explicit_problems
from agentlens.stepvalue.candidates.fault_localisation import (
    fault_localisation_problem,
    fault_localisation_space,
)
from agentlens.stepvalue.candidates.outcome import outcome_problem

__all__ = [
    "coding_transitions",
    "explicit_problems",
    "fault_localisation_problem",
    "fault_localisation_space",
    "outcome_problem",
]
