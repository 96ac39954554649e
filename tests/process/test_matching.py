"""Φ_cov's maximum bipartite matching in pure Python equals scipy's on every graph tried."""

from __future__ import annotations

import random

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching

from agentlens.process.signals.coverage import max_matching


def scipy_size(adjacent: list[list[int]], n_cols: int) -> int:
    rows = [i for i, cols in enumerate(adjacent) for _ in cols]
    cols = [j for cols in adjacent for j in cols]
    if not rows:
        return 0
    graph = csr_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)),
                       shape=(len(adjacent), n_cols))  # fmt: skip
    return int((maximum_bipartite_matching(graph, perm_type="column") >= 0).sum())


def test_matching_size_equals_scipys_on_random_graphs() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        n_rows, n_cols, density = rng.randint(0, 40), rng.randint(1, 40), rng.random() * 0.4
        adjacent = [[j for j in range(n_cols) if rng.random() < density] for _ in range(n_rows)]
        assert max_matching(adjacent) == scipy_size(adjacent, n_cols), adjacent


def test_a_path_longer_than_the_recursion_limit() -> None:
    n = 5000  # row i reaches columns i and i+1; rows taken in reverse force one long path
    adjacent = [[i + 1, i] for i in range(n)]
    assert max_matching(adjacent) == n == scipy_size(adjacent, n + 1)
