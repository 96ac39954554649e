"""Matching a candidate run against a reference (spec §6).

For every enumerated reference path the release runs a greedy first-fit 1-to-1 matching (each path
state takes the first unused candidate state it is equivalent to) and keeps the best path by: more
distinct stages, more matches, higher coverage, longer path. Here the equivalence verdicts are
computed once per (reference node, candidate state) pair, only inside compatible (stage, tool
group) buckets, and paths that share a prefix (depth-first order) resume the greedy state of that
prefix instead of recomputing it. Results are identical to the per-path loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agentlens.process.equivalence import Equivalence, tool_info
from agentlens.process.states import ProcState
from agentlens.process.terminal_index import TerminalIndex


@dataclass
class PathMatch:
    """The greedy matching of one reference path. `pairs[i]` is the candidate index matched to
    path state i, or -1."""

    index: int
    path: list[ProcState]
    pairs: list[int]
    matched: int
    stages: int

    @property
    def total(self) -> int:
        return len(self.path)

    @property
    def coverage(self) -> float:
        return self.matched / self.total * 100.0 if self.total else 0.0

    @property
    def matched_idx(self) -> list[int]:
        return [i for i, j in enumerate(self.pairs) if j >= 0]

    @property
    def missing_idx(self) -> list[int]:
        return [i for i, j in enumerate(self.pairs) if j < 0]


@dataclass
class MatchResult:
    best: PathMatch | None
    candidate: list[ProcState]
    n_paths: int
    terminal_match: bool = False
    alignment: list[int] = field(default_factory=list)
    lists: MatchLists | None = None

    @property
    def divergence_index(self) -> int | None:
        missing = self.best.missing_idx if self.best else []
        return missing[0] if missing else None


def bucket(state: ProcState) -> tuple[str, str]:
    return (state.stage, tool_info(state.tool).group or f"tool:{state.tool}")


class MatchLists:
    """Per reference node: candidate indices it is equivalent to, ascending (computed lazily)."""

    def __init__(
        self, cand: Sequence[ProcState], eq: Equivalence, index: TerminalIndex | None = None
    ) -> None:
        self.cand = cand
        self.eq = eq
        self.terminal = index.match(cand) if index is not None else {}
        self.by_bucket: dict[tuple[str, str], list[int]] = {}
        self.unlabelled: list[int] = []
        for j, c in enumerate(cand):
            if c.stage:
                self.by_bucket.setdefault(bucket(c), []).append(j)
            else:
                self.unlabelled.append(j)
        self.cache: dict[int, list[int]] = dict(self.terminal)

    def __call__(self, node: ProcState) -> list[int]:
        found = self.cache.get(id(node))
        if found is None:
            found = self.cache[id(node)] = self._compute(node)
        return found

    def _compute(self, node: ProcState) -> list[int]:
        if node.stage:
            pool = self.by_bucket.get(bucket(node), [])
            if self.unlabelled:
                pool = sorted(pool + self.unlabelled)
        else:
            pool = list(range(len(self.cand)))
        check, cand = self.eq.check, self.cand
        return [j for j in pool if check(node, cand[j], 1)]


@dataclass(frozen=True)
class PathPlan:
    """Per reference path: how many leading states it shares with the previous path (depth-first
    order) and how many distinct stages it has. Computed once per reference."""

    paths: list[list[ProcState]]
    keep: list[int]
    stages: list[int]
    nodes: list[ProcState]
    ids: list[list[int]]

    @classmethod
    def of(cls, paths: list[list[ProcState]]) -> PathPlan:
        keep: list[int] = []
        prev: list[ProcState] = []
        dense: dict[int, int] = {}
        nodes: list[ProcState] = []
        for path in paths:
            keep.append(_common_prefix(prev, path))
            prev = path
            for node in path:
                if id(node) not in dense:
                    dense[id(node)] = len(nodes)
                    nodes.append(node)
        ids = [[dense[id(n)] for n in p] for p in paths]
        return cls(paths, keep, [len({s.stage for s in p} - {""}) for p in paths], nodes, ids)


def match_candidate(
    cand: list[ProcState],
    paths: list[list[ProcState]] | PathPlan,
    eq: Equivalence,
    index: TerminalIndex | None = None,
    strategy: str = "best_match",
) -> MatchResult:
    """Best-path greedy set matching of `cand` (initial state first) against `paths`.
    `index` (the reference's terminal nodes, vectorised) only speeds the verdicts up.
    `strategy="canonical"` keeps the path with the most stages, then the longest (first on
    ties), chosen without looking at the candidate (the release's `gt_strategy`)."""
    plan = paths if isinstance(paths, PathPlan) else PathPlan.of(paths)
    if not plan.paths or not cand:
        return MatchResult(None, cand, len(plan.paths))
    lists = MatchLists(cand, eq, index)
    by_id = [lists(node) if i else [] for i, node in enumerate(plan.nodes)]
    better = _is_canonical if strategy == "canonical" else _is_better
    best: PathMatch | None = None
    used_at: list[tuple[int, int]] = [(0, 0)]
    pairs: list[int] = []
    for number, path in enumerate(plan.paths):
        keep = plan.keep[number]
        del used_at[keep + 1 :]
        del pairs[keep:]
        used, count = used_at[keep]
        ids = plan.ids[number]
        for i in range(keep, len(path)):
            j = 0 if i == 0 else -1
            if i:
                for c in by_id[ids[i]]:
                    if not used >> c & 1:
                        j = c
                        break
            if j >= 0:
                used |= 1 << j
                count += 1
            pairs.append(j)
            used_at.append((used, count))
        stages = plan.stages[number]
        if best is None or better(stages, count, path, best):
            best = PathMatch(number, path, list(pairs), count, stages)
    assert best is not None
    result = MatchResult(best, cand, len(plan.paths))
    result.terminal_match = eq.check(best.path[-1], cand[-1], best.total - 1)
    result.alignment = _alignment(best, cand, eq)
    result.lists = lists
    return result


def _common_prefix(a: list[ProcState], b: list[ProcState]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x is not y:
            break
        n += 1
    return n


def _is_better(stages: int, matched: int, path: list[ProcState], best: PathMatch) -> bool:
    if stages != best.stages:
        return stages > best.stages
    if matched != best.matched:
        return matched > best.matched
    coverage = matched / len(path) * 100.0
    if abs(coverage - best.coverage) > 1e-9:
        return coverage > best.coverage
    return len(path) > best.total


def _is_canonical(stages: int, matched: int, path: list[ProcState], best: PathMatch) -> bool:
    return stages > best.stages or (stages == best.stages and len(path) > best.total)


def _alignment(best: PathMatch, cand: list[ProcState], eq: Equivalence) -> list[int]:
    """The release's step alignment: walk the candidate, matching the next matched path index in
    path order when equivalent. Returns, per candidate index, the path index or -1."""
    targets = iter(best.matched_idx)
    nxt = next(targets, None)
    out = []
    for c in cand:
        if nxt is not None and eq.check(best.path[nxt], c, nxt):
            out.append(nxt)
            nxt = next(targets, None)
        else:
            out.append(-1)
    return out
