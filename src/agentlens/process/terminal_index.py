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

    def match(self, cand: Sequence[ProcState]) -> dict[int, list[int]]:
        """id(node) → ascending candidate indices equivalent to it (terminal pairs only)."""
        cols = [j for j, c in enumerate(cand) if is_terminal(c)]
        if not cols or not self.nodes:
            return {id(n): [] for n in self.nodes}
        b = encode([cand[j] for j in cols], self.intern)
        mask = self._mask(self.codes, b, [terminal_key(cand[j])[3] for j in cols])
        rows, idx = np.nonzero(mask)
        out: dict[int, list[int]] = {id(n): [] for n in self.nodes}
        col_index = np.asarray(cols)[idx]
        for r, j in zip(rows.tolist(), col_index.tolist(), strict=True):
            out[id(self.nodes[r])].append(j)
        return out

    def _mask(self, a: np.ndarray, b: np.ndarray, cand_targets: list[str]) -> np.ndarray:
        def eq(f: int) -> np.ndarray:
            return a[f][:, None] == b[f][None, :]

        def nz(x: np.ndarray) -> np.ndarray:
            return x != 0

        sa, sb = a[0][:, None], b[0][None, :]
        stage_ok = (sa == sb) | (sa == 0) | (sb == 0)
        ha, hb = nz(a[1])[:, None], nz(b[1])[None, :]
        decided = (eq(1) & ha) | (eq(2) & nz(a[2])[:, None] & ~(ha & hb)) | eq(3) | eq(9)
        cmds = nz(a[4])[:, None] & nz(b[4])[None, :]
        same_group = eq(6) & nz(a[6])[:, None]
        ta, tb = nz(a[7])[:, None], nz(b[7])[None, :]
        group_rule = same_group & (~ta | ~tb | eq(7))
        terminal = eq(5) | group_rule
        if self.eq.base_command_rule:
            terminal |= eq(8) & nz(a[8])[:, None]
        mask = stage_ok & (decided | (cmds & terminal))
        pending = stage_ok & ~mask & cmds & same_group & (a[6][:, None] == self.search) & ta & tb
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
