"""Matching: the shared-prefix greedy equals the release's per-path loop (written out naively
here) on real runs, and the best-path rule's priorities on a hand example."""

from __future__ import annotations

from agentlens.process.equivalence import Equivalence
from agentlens.process.match import PathPlan, match_candidate
from agentlens.process.profiles import get_profile
from agentlens.process.pta import run_labels
from agentlens.process.states import ProcState, initial_state, states_from_trajectory
from tests.process.test_pta import TASK, bench_reference, bench_split

EQ = Equivalence()


def naive(cand: list[ProcState], paths: list[list[ProcState]]) -> tuple[int, list[int], int]:
    """Spec §6 verbatim: greedy first-fit per path; best by stages, matches, coverage, length."""
    best = None
    for index, path in enumerate(paths):
        used: set[int] = set()
        pairs = []
        for i, g in enumerate(path):
            j = next((j for j, c in enumerate(cand) if j not in used and EQ.check(g, c, i)), -1)
            if j >= 0:
                used.add(j)
            pairs.append(j)
        key = (len({s.stage for s in path} - {""}), len(used), len(used) / len(path), len(path))
        if best is None or key > best[0]:
            best = (key, index, pairs)
    assert best is not None
    return best[1], best[2], best[0][1]


def test_shared_prefix_matching_equals_the_per_path_loop() -> None:
    ref = bench_reference(TASK)
    paths = ref.paths()
    config = get_profile("sdk-compat")
    for traj in bench_split(TASK).scored[:10]:
        cand = states_from_trajectory(traj, run_labels(traj, config), use_raw=True)
        got = match_candidate(cand, PathPlan.of(paths), EQ)
        index, pairs, matched = naive(cand, paths)
        assert got.best is not None
        assert (got.best.index, got.best.pairs, got.best.matched) == (index, pairs, matched)


def st(stage: str, path: str) -> ProcState:
    return ProcState(step_no=1, tool="read_file", stage=stage, file_path=path, has_entry=True)


def test_best_path_prefers_more_stages_then_more_matches() -> None:
    root = initial_state()
    a, b, c = st("E", "a.py"), st("E", "b.py"), st("V", "c.py")
    short_rich = [root, a, c]  # two stages, one match
    long_poor = [root, a, b]  # one stage, two matches
    cand = [initial_state(), st("E", "a.py"), st("E", "b.py")]
    result = match_candidate(cand, [long_poor, short_rich], EQ)
    assert result.best is not None and result.best.index == 1
    assert result.best.pairs == [0, 1, -1]
    assert result.divergence_index == 2
    assert result.alignment == [0, 1, -1]
    assert not result.terminal_match


def test_canonical_strategy_ignores_the_candidate() -> None:
    """Spec §6, strategy `canonical`: the path with the most stages, then the longest (first on
    ties), the same for every candidate; its matching is the per-path greedy of that path."""
    ref = bench_reference(TASK)
    paths = ref.paths()
    keys = [(len({s.stage for s in p} - {""}), len(p)) for p in paths]
    want = keys.index(max(keys))
    config = get_profile("sdk-compat")
    for traj in bench_split(TASK).scored[:4]:
        cand = states_from_trajectory(traj, run_labels(traj, config), use_raw=True)
        got = match_candidate(cand, PathPlan.of(paths), EQ, strategy="canonical")
        assert got.best is not None and got.best.index == want
        assert (got.best.pairs, got.best.matched) == naive(cand, [paths[want]])[1:]
