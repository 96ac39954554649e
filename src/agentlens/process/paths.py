"""Reference path enumeration (spec §6): depth-first from the initial state, successors in the
order of their edge ids compared as strings (`merged_trans_10` before `merged_trans_2`), emitting
only paths that end at a donor run's terminal state, continuing past terminals, capped at
`max_paths`. Iterative, so deep references cannot hit the recursion limit."""

from __future__ import annotations

from collections.abc import Sequence

from agentlens.process.states import ProcState


def enumerate_paths(
    nodes: dict[str, ProcState],
    successors: dict[str, list[str]],
    initial: str,
    terminals: Sequence[str],
    max_paths: int = 50,
) -> list[list[ProcState]]:
    """Paths of `nodes` from `initial` to any of `terminals`; `successors` in the order walked."""
    ends = set(terminals)
    paths: list[list[str]] = []
    if initial not in nodes:
        return []
    path: list[str] = []
    on_path: set[str] = set()
    stack: list[tuple[str, int]] = [(initial, 0)]
    while stack and len(paths) < max_paths:
        node, depth = stack.pop()
        on_path.difference_update(path[depth:])  # on_path is set(path): a node is on it once
        del path[depth:]
        if node in on_path or node not in nodes:
            continue
        path.append(node)
        on_path.add(node)
        if node in ends:
            paths.append(list(path))
        for nxt in reversed(successors.get(node, [])):
            stack.append((nxt, depth + 1))
    return [[nodes[n] for n in p] for p in paths]
