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
    rows, cols = [], []
    for i, state in enumerate(states):
        for j in lists(state):
            rows.append(i)
            cols.append(j)
    if not rows or not n_cand:
        return 0
    # scipy and numpy only when a run is scored: `agentlens <command> --help` stays fast
    import numpy as np
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching

    data = np.ones(len(rows), dtype=np.int8)
    graph = csr_matrix((data, (rows, cols)), shape=(len(states), n_cand))
    match = maximum_bipartite_matching(graph, perm_type="column")
    return int((match >= 0).sum())


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
