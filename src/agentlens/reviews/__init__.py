"""Trajectory reviews (arXiv 2607.06624): formal verifiers, LLM-judge reviews on five dimensions,
the Quality Index, side-by-side comparison, judge reliability checks, telemetry and run-vs-run
regression tests. See `docs`-level spec `spec-reviews.md`."""

from __future__ import annotations

DIMENSIONS: tuple[str, ...] = (
    "EndResult",
    "InstructionCompliance",
    "Pitfalls",
    "Pleasantness",
    "ToolCalls",
)
