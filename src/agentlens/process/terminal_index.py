"""Vectorised equivalence for terminal-command states, the bulk of every trajectory.

For two terminal calls in one stage every rule of the cascade that can decide says "equivalent"
(see `Equivalence._terminal_pair`), so the verdict is an OR of equalities of per-state codes:
content hash, resulting state (when a hash is missing), observation, normalised command, command
group + target, first token (sdk-compat only) and collapsed command. Codes are interned integers
(0 = empty), so one reference × candidate matrix per rule decides every pair at once; only search
targets that differ fall back to the word-Jaccard test in Python (memoised).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from agentlens.process.equivalence import Equivalence, terminal_key, word_jaccard
from agentlens.process.states import ProcState

FEATURES = ("stage", "hash", "rs", "obs", "has_cmd", "norm", "group", "target", "base", "collapsed")


def is_terminal(state: ProcState) -> bool:
    return state.tool == "run_in_terminal" and state.has_entry


class Interner:
    """Strings → dense integer codes; "" is 0."""

    def __init__(self) -> None:
        self.codes: dict[str, int] = {"": 0}

    def __call__(self, text: str) -> int:
        return self.codes.setdefault(text, len(self.codes))

    def many(self, texts: Sequence[str]) -> list[int]:
        codes = self.codes
        add = codes.setdefault
        return [add(t, len(codes)) for t in texts]


def encode(states: Sequence[ProcState], intern: Interner) -> np.ndarray:
    """(features × states) int64 codes."""
    keys = [terminal_key(s) for s in states]
    columns = [
        intern.many([s.stage for s in states]),
        intern.many([s.content_hash for s in states]),
        intern.many([s.resulting_state for s in states]),
        intern.many([s.observation for s in states]),
        [int(k[0]) for k in keys],
        *(intern.many([str(k[f]) for k in keys]) for f in range(1, 6)),
    ]
    return np.array(columns, dtype=np.int64).reshape(len(FEATURES), len(states))


class TerminalIndex:
    """Reference-side codes for every terminal node; `match(cand)` → verdict matrix rows."""

    def __init__(self, nodes: Sequence[ProcState], eq: Equivalence) -> None:
        self.intern = Interner()
        self.nodes = [n for n in nodes if is_terminal(n)]
        self.codes = encode(self.nodes, self.intern)
        self.targets = [terminal_key(n)[3] for n in self.nodes]
        self.eq = eq
        self.jaccard: dict[tuple[str, str], bool] = {}
        self.search = self.intern("search")
        self.side = _ReferenceSide(self.codes, self.search)

    def match(self, cand: Sequence[ProcState]) -> dict[int, list[int]]:
        """id(node) → ascending candidate indices equivalent to it (terminal pairs only)."""
        cols = [j for j, c in enumerate(cand) if is_terminal(c)]
        if not cols or not self.nodes:
            return {id(n): [] for n in self.nodes}
        b = encode([cand[j] for j in cols], self.intern)
        mask = self._mask(b, [terminal_key(cand[j])[3] for j in cols])
        rows, idx = np.nonzero(mask)
        out: dict[int, list[int]] = {id(n): [] for n in self.nodes}
        col_index = np.asarray(cols)[idx]
        for r, j in zip(rows.tolist(), col_index.tolist(), strict=True):
            out[id(self.nodes[r])].append(j)
        return out

    def _mask(self, b: np.ndarray, cand_targets: list[str]) -> np.ndarray:
        ref = self.side  # the reference's columns, computed once

        def eq(f: int) -> np.ndarray:
            return ref.codes[f] == b[f][None, :]

        sb = b[0][None, :]
        stage_ok = (ref.codes[0] == sb) | ref.no_stage | (sb == 0)
        hb = (b[1] != 0)[None, :]
        decided = (eq(1) & ref.has_hash) | (eq(2) & ref.has_rs & ~(ref.has_hash & hb))
        decided |= eq(3) | eq(9)
        cmds = ref.has_cmd & (b[4] != 0)[None, :]
        same_group = eq(6) & ref.has_group
        tb = (b[7] != 0)[None, :]
        terminal = eq(5) | (same_group & (ref.no_target | ~tb | eq(7)))
        if self.eq.base_command_rule:
            terminal |= eq(8) & ref.has_base
        mask = stage_ok & (decided | (cmds & terminal))
        pending = stage_ok & ~mask & cmds & same_group & ref.search_target & tb
        for r, c in zip(*np.nonzero(pending), strict=True):
            mask[r, c] = self._similar(self.targets[r], cand_targets[c])
        return mask

    def _similar(self, ta: str, tb: str) -> bool:
        key = (ta, tb)
        found = self.jaccard.get(key)
        if found is None:
            found = word_jaccard(ta, tb) >= self.eq.search_jaccard_min
            self.jaccard[key] = found
        return found


class _ReferenceSide:
    """A reference's feature codes as columns (n × 1) and the tests on them alone, which every
    candidate's verdict matrix shares (computed once per reference, not per candidate)."""

    def __init__(self, a: np.ndarray, search: int) -> None:
        self.codes = [row[:, None] for row in a]
        nz = a != 0
        self.no_stage = ~nz[0][:, None]
        self.has_hash, self.has_rs = nz[1][:, None], nz[2][:, None]
        self.has_cmd, self.has_group = nz[4][:, None], nz[6][:, None]
        self.no_target = ~nz[7][:, None]
        self.has_base = nz[8][:, None]
        self.search_target = ((a[6] == search) & nz[7])[:, None]
