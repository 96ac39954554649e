"""Φ_cov, coverage of the reference (spec §7.3).

* `best_path` (sdk-compat `coverage_percent`): matched / best-path length × 100.
* `all_states` (paper): reference states, across all paths, matched by some candidate state under
  a maximum bipartite matching without order, ÷ reference states × 100.
* `file` (the release's holdout code): |required ∩ candidate files| / |required| × 100, required =
  files edited by replace-style tools anywhere in the reference, candidate = those plus creates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agentlens.process.signals import Signal, ratio
from agentlens.process.states import ProcState

REPLACE_TOOLS = {
    "replace_string_in_file",
    "multi_replace_string_in_file",
    "apply_patch",
    "edit_file",
}


def bipartite(
    states: Sequence[ProcState], n_cand: int, lists: Callable[[ProcState], list[int]]
) -> int:
    """Size of a maximum matching between `states` and candidate indices."""
    if not n_cand:
        return 0
    return max_matching([lists(state) for state in states])


def max_matching(adjacent: Sequence[Sequence[int]]) -> int:
    """Size of a maximum bipartite matching, row i adjacent to the columns in `adjacent[i]`
    (Kuhn's augmenting paths). The size is the same for every maximum matching, so this equals
    scipy's `maximum_bipartite_matching`; it is exact, in pure Python, and for the few hundred
    states of a reference quicker than importing scipy.sparse (0.3-0.4 s per process)."""
    row_of: dict[int, int] = {}  # column -> its matched row
    col_of: dict[int, int] = {}  # row -> its matched column
    for root in range(len(adjacent)):
        free = _augmenting_path(adjacent, root, row_of)
        if free is None:
            continue
        col, parents = free
        while True:  # flip the path: every column on it takes the row that reached it
            row = parents[col]
            previous = col_of.get(row)
            row_of[col], col_of[row] = row, col
            if row == root or previous is None:
                break
            col = previous
    return len(col_of)


def _augmenting_path(
    adjacent: Sequence[Sequence[int]], root: int, row_of: dict[int, int]
) -> tuple[int, dict[int, int]] | None:
    """A free column reachable from `root` by an alternating path, and each visited column's
    parent row; iterative, so a long path cannot reach Python's recursion limit."""
    parents: dict[int, int] = {}
    stack = [(root, iter(adjacent[root]))]
    while stack:
        row, cols = stack[-1]
        for col in cols:
            if col in parents:
                continue
            parents[col] = row
            if col not in row_of:
                return col, parents
            stack.append((row_of[col], iter(adjacent[row_of[col]])))
            break
        else:
            stack.pop()
    return None


def best_path_coverage(matched: int, n_path: int) -> Signal:
    value = ratio(matched, n_path, 100)
    return Signal("cov", value, f"best path: {matched}/{n_path} states matched = {value:.1f}%")


def all_states_coverage(
    states: Sequence[ProcState], width: int, lists: Callable[[ProcState], list[int]]
) -> Signal:
    matched = bipartite(states, width, lists)
    value = ratio(matched, len(states), 100)
    reason = f"all reference states: {matched}/{len(states)} matched (bipartite) = {value:.1f}%"
    return Signal("cov", value, reason)


def file_coverage(reference: Sequence[ProcState], cand: Sequence[ProcState]) -> Signal:
    required = {s.file_path for s in reference if s.tool in REPLACE_TOOLS and s.file_path}
    tools = REPLACE_TOOLS | {"create_file"}
    have = {s.file_path for s in cand if s.tool in tools and s.file_path}
    if not required:
        return Signal("cov", 100.0, "file coverage: no files edited in the reference → 100")
    value = ratio(len(required & have), len(required), 100)
    return Signal(
        "cov", value, f"file coverage: {len(required & have)}/{len(required)} = {value:.1f}%"
    )
