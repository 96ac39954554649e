"""Work planning: each distinct rendered state of a trajectory is scored once per channel and
permutation, never once per transition (the state after step t is the state before step t+1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentlens.stepvalue.model import Problem
from agentlens.stepvalue.projection import Slice, render_state, slice_state, state_hash


@dataclass
class StateTable:
    """The distinct rendered states of one problem under one slice, and each transition's pair."""

    slice: Slice
    raw: list[dict[str, Any]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    hashes: list[str] = field(default_factory=list)
    pairs: list[tuple[int, int]] = field(default_factory=list)
    _index: dict[str, int] = field(default_factory=dict)

    def position(self, state: dict[str, Any], text: str) -> int:
        digest = state_hash(text)
        if digest in self._index:
            return self._index[digest]
        self._index[digest] = len(self.hashes)
        self.raw.append(state)
        self.texts.append(text)
        self.hashes.append(digest)
        return len(self.hashes) - 1


def state_table(problem: Problem, which: Slice, limit: int) -> StateTable:
    """Render and de-duplicate the before/after states of every transition."""
    table = StateTable(which)
    for transition in problem.transitions:
        ends = []
        for state in (transition.before, transition.after):
            sliced = slice_state(state, which)
            ends.append(
                table.position(sliced, render_state(sliced, policy=problem.redaction, limit=limit))
            )
        table.pairs.append((ends[0], ends[1]))
    return table


def naive_calls(transitions: int, permutations: int, rationale_channels: int, channels: int) -> int:
    """Calls without state sharing: 2 states per transition, each scored B times per channel plus
    one rationale per state for a rationale channel."""
    return 2 * transitions * (channels * permutations + rationale_channels)
