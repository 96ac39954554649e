"""Φ_struct, structural alignment with the best reference path (spec §7.2).

* `set_f1` (sdk-compat): F1 of set recall (matched / path length) and set precision (matched /
  candidate length) from the greedy first-fit matching, initial state included, percent units.
* `ordered` (paper): ordered recall by a greedy forward scan (stop at the first path state never
  found) and unordered precision by maximum bipartite matching; harmonic mean, percent units.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agentlens.process.signals import Signal, ratio
from agentlens.process.signals.coverage import bipartite
from agentlens.process.states import ProcState


def f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def set_f1(matched: int, n_path: int, n_cand: int) -> Signal:
    recall, precision = ratio(matched, n_path, 100), ratio(matched, n_cand, 100)
    value = f1(precision, recall)
    reason = (
        f"recall {matched}/{n_path} = {recall:.1f}%, precision {matched}/{n_cand} = "
        f"{precision:.1f}% (greedy set matching) → F1 = {value:.1f}"
    )
    return Signal("struct", value, reason)


def ordered_recall(
    path: Sequence[ProcState], lists: Callable[[ProcState], list[int]], stop_at_miss: bool = False
) -> int:
    """Greedy forward scan: each path state takes the next equivalent candidate after the last
    one taken. A state with none is skipped (`stop_at_miss` ends the scan there instead, as the
    release's unused `_subsequence_coverage` does)."""
    position, found = 0, 0
    for state in path:
        nxt = next((j for j in lists(state) if j >= position), None)
        if nxt is None:
            if stop_at_miss:
                break
            continue
        found += 1
        position = nxt + 1
    return found


def ordered_struct(
    path: Sequence[ProcState], n_cand: int, lists: Callable[[ProcState], list[int]], width: int
) -> Signal:
    """`n_cand` is the precision denominator; candidate indices run below `width`."""
    recall_n = ordered_recall(path, lists)
    matched = bipartite(path, width, lists)
    recall, precision = ratio(recall_n, len(path), 100), ratio(matched, n_cand, 100)
    value = f1(precision, recall)
    reason = (
        f"ordered recall {recall_n}/{len(path)} = {recall:.1f}%, bipartite precision "
        f"{matched}/{n_cand} = {precision:.1f}% → F1 = {value:.1f}"
    )
    return Signal("struct", value, reason)
