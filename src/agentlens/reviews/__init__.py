"""Trajectory reviews (arXiv 2607.06624): formal verifiers, LLM-judge reviews on five dimensions,
the Quality Index, side-by-side comparison, judge reliability checks, telemetry and run-vs-run
regression tests. See `docs`-level spec `spec-reviews.md`."""

from __future__ import annotations

from collections.abc import Iterable

DIMENSIONS: tuple[str, ...] = (
    "EndResult",
    "InstructionCompliance",
    "Pitfalls",
    "Pleasantness",
    "ToolCalls",
)
"""The `workflows` metric set, and the judge components of the Quality Index."""

TESTING_DIMENSIONS: tuple[str, ...] = (
    "RelianceOnMocking",
    "TestMaintainability",
    "TestSemanticCoverage",
    "TestUsefulness",
)
"""What the `testing` set adds (spec §5.6). The paper names them only, so their rubrics are
AgentLens's own; they are reported beside the Quality Index, never folded into it."""

ALL_DIMENSIONS: tuple[str, ...] = (*DIMENSIONS, *TESTING_DIMENSIONS)
"""Every dimension with a rubric, in the order reports list them."""

METRIC_SETS: dict[str, tuple[str, ...]] = {"workflows": DIMENSIONS, "testing": ALL_DIMENSIONS}
"""The dimensions reviewed per scenario tag (spec §5.6)."""


def canonical_order(dimensions: Iterable[str]) -> list[str]:
    """The dimensions in the order reports list them; any without a rubric last, sorted."""
    found = set(dimensions)
    return [d for d in ALL_DIMENSIONS if d in found] + sorted(found - set(ALL_DIMENSIONS))


NO_SCORED_ITEM = 4
"""The exit code when some dimension has no scored item (`review`, `sxs`, `selfpref`) or the QI
built on it is n/a (`qi`): every answer on it was unscored (or failed), so its mean is n/a. A CI
gate reading only the exit code must not pass on a number that was never computed."""
