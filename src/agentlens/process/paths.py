"""Reference path enumeration (spec §6): depth-first from the initial state, successors in the
order of their edge ids compared as strings (`merged_trans_10` before `merged_trans_2`), emitting
only paths that end at a donor run's terminal state, continuing past terminals, capped at
`max_paths`. Iterative, so deep references cannot hit the recursion limit."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentlens.process.pta import Reference
    from agentlens.process.states import ProcState


def enumerate_paths(ref: Reference, max_paths: int = 50) -> list[list[ProcState]]:
    outgoing: dict[str, list[tuple[str, str]]] = {}
    for edge in ref.edges:
        outgoing.setdefault(edge.source, []).append((edge.id, edge.target))
    succ = {k: [t for _, t in sorted(v, key=lambda p: p[0])] for k, v in outgoing.items()}
    terminals = set(ref.terminals)
    paths: list[list[str]] = []
    if ref.initial not in ref.nodes:
        return []
    path: list[str] = []
    on_path: set[str] = set()
    stack: list[tuple[str, int]] = [(ref.initial, 0)]
    while stack and len(paths) < max_paths:
        node, depth = stack.pop()
        del path[depth:]
        on_path.intersection_update(path)
        if node in on_path or node not in ref.nodes:
            continue
        path.append(node)
        on_path.add(node)
        if node in terminals:
            paths.append(list(path))
        for nxt in reversed(succ.get(node, [])):
            stack.append((nxt, depth + 1))
    return [[ref.nodes[n] for n in p] for p in paths]
