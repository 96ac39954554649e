"""Divergence points (spec §12): where the run left the best reference path.

`step` is 1-based on the reference path (the first path state the matching missed); `segments` are
runs of consecutive missed path states, each with the candidate activity mapped proportionally.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agentlens.list_text import counted
from agentlens.process.states import ProcState


@dataclass(frozen=True)
class Segment:
    start_step: int
    end_step: int
    expected: list[str]
    candidate_activity: list[str]


@dataclass(frozen=True)
class Divergence:
    index: int | None
    step: int | None
    expected_next: str
    actual: str
    fraction: float | None
    segments: list[Segment] = field(default_factory=list)
    reason: str = ""
    path_length: int = 0
    """States on the best reference path (the release's `fraction` divides by the run's own)."""


def describe(state: ProcState) -> str:
    tool = state.tool or "unknown"
    return f"{tool} on {state.file_path}" if state.file_path else tool


def divergence(
    path: Sequence[ProcState],
    missing: Sequence[int],
    cand: Sequence[ProcState],
    alignment: Sequence[int],
    n_states: int,
) -> Divergence:
    if not missing:
        return Divergence(None, None, "", "", None, [], "every best-path state was matched")
    index = missing[0]
    first_unmatched = next((c for c, g in zip(cand, alignment, strict=False) if g < 0), None)
    actual = describe(first_unmatched) if first_unmatched else "(no matching candidate step)"
    step = index + 1
    fraction = round(step / n_states, 4) if n_states > 0 else None
    segments = _segments(path, missing, cand, alignment)
    reason = (
        f"first missed reference state at path position {step} of {len(path)} "
        f"(expected {describe(path[index])}, candidate did {actual}); {counted(len(segments), 'gap')}"
    )
    return Divergence(
        index, step, describe(path[index]), actual, fraction, segments, reason, len(path)
    )


def _segments(
    path: Sequence[ProcState],
    missing: Sequence[int],
    cand: Sequence[ProcState],
    alignment: Sequence[int],
) -> list[Segment]:
    runs: list[list[int]] = []
    for idx in sorted(missing):
        if runs and idx == runs[-1][-1] + 1:
            runs[-1].append(idx)
        else:
            runs.append([idx])
    matched = {k for k, g in enumerate(alignment) if g >= 0}
    out = []
    for run in runs:
        lo = int(run[0] / max(len(path), 1) * len(cand))
        hi = min(int((run[-1] + 1) / max(len(path), 1) * len(cand)) + 1, len(cand))
        activity = [describe(cand[c]) for c in range(max(0, lo), hi) if c not in matched]
        out.append(Segment(run[0] + 1, run[-1] + 1, [describe(path[i]) for i in run], activity))
    return out
