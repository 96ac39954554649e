"""Unnecessary exploration: after the first implementation step, exploring (E) a file that no
reference state touches, that the reference's first path does not explore after implementing, and
whose path does not mention test/spec."""

from __future__ import annotations

from collections.abc import Sequence

from agentlens.process.states import ProcState
from agentlens.process.waste.finding import WasteFinding, finding


def post_impl_explored(states: Sequence[ProcState]) -> set[str]:
    started, files = False, set()
    for s in states:
        started = started or s.stage == "I"
        if started and s.stage == "E" and s.file_path:
            files.add(s.file_path)
    return files


def unnecessary_exploration(
    cand: Sequence[ProcState], first_path: Sequence[ProcState], reference_files: set[str]
) -> WasteFinding:
    allowed = post_impl_explored(first_path) | reference_files
    started = False
    spans: list[tuple[list[int], str]] = []
    for i, s in enumerate(cand):
        if s.stage == "I":
            started = True
            continue
        if started and s.stage == "E" and s.file_path:
            lower = s.file_path.lower()
            if "test" in lower or "spec" in lower or s.file_path in allowed:
                continue
            spans.append(([i], f"explored {s.file_path} after implementing"))
    return finding(
        "unnecessary_exploration", cand, spans, "post-implementation E off the reference"
    )
