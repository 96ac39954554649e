"""The reference graph: a Prefix Tree Acceptor merged from k ≥ 2 passing runs of one task (spec §5).

Merging follows the release: a greedy single-pointer alignment of each new run against the merged
states in step order (so later states may re-join the spine: a DAG, not a strict tree), then
consolidation of duplicate resulting states, removal of backward edges and (profile permitting)
re-labelling of the merged states in step order. Each node keeps its support count (how many runs
passed through it); branch points are nodes with more than one successor.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, TypeVar

from agentlens.errors import AgentLensError, ConfigError
from agentlens.process.equivalence import Equivalence
from agentlens.process.labeler import label_steps, label_trajectory
from agentlens.process.paths import enumerate_paths
from agentlens.process.profiles import DEFAULT_PROFILE, Profile, ProfileConfig, get_profile
from agentlens.process.stages import Stage
from agentlens.process.states import ProcState, states_from_trajectory
from agentlens.trajectory import Trajectory

if TYPE_CHECKING:
    from agentlens.process.terminal_index import TerminalIndex

T = TypeVar("T")
CROSS_STEP = (
    "file_created:",
    "file_read:",
    "file_patched:",
    "files_modified:",
    "llm_response:confirmed:",
)
NO_CONSOLIDATE = {"llm_response:terminal", "initial", ""}


@dataclass(frozen=True, slots=True)
class Edge:
    id: str
    source: str
    target: str
    action: str


@dataclass
class Reference:
    """A merged reference. `nodes` are in insertion order; `terminals` end the donor runs."""

    nodes: dict[str, ProcState]
    edges: list[Edge]
    initial: str
    terminals: list[str]
    donors: list[str] = field(default_factory=list)
    profile: Profile = "paper"
    tasks: list[str] = field(default_factory=list)
    """The donors' task ids (empty in references saved before they were kept)."""
    _memo: dict[object, Any] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        """Its size and donors, not every state whole (a real one's runs to 400 KB)."""
        return (
            f"Reference(tasks={self.tasks!r}, profile={self.profile!r}, "
            f"nodes={len(self.nodes)}, edges={len(self.edges)}, donors={self.donors!r})"
        )

    def cached(self, key: object, compute: Callable[[], T]) -> T:
        """Memoise reference-side work (paths, path plans, terminal index, waste patterns) across
        candidates."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def terminal_index(self, eq: Equivalence) -> TerminalIndex:
        """Vectorised terminal-node codes for this reference (cached per equivalence setting)."""
        from agentlens.process.terminal_index import TerminalIndex

        key = ("terminal_index", eq.base_command_rule, eq.search_jaccard_min)
        return self.cached(key, lambda: TerminalIndex(list(self.nodes.values()), eq))

    def paths(self, max_paths: int = 50) -> list[list[ProcState]]:
        """Root-to-terminal paths, depth-first, successors by edge id compared as strings (cached)."""
        return self.cached(("paths", max_paths), lambda: self._paths(max_paths))

    def _paths(self, max_paths: int) -> list[list[ProcState]]:
        outgoing: dict[str, list[tuple[str, str]]] = {}
        for edge in self.edges:
            outgoing.setdefault(edge.source, []).append((edge.id, edge.target))
        ordered = {k: [t for _, t in sorted(v, key=lambda p: p[0])] for k, v in outgoing.items()}
        return enumerate_paths(self.nodes, ordered, self.initial, self.terminals, max_paths)

    def successors(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for edge in self.edges:
            out.setdefault(edge.source, []).append(edge.target)
        return out

    def branch_points(self) -> list[str]:
        """Nodes where donor runs went different ways (more than one successor)."""
        return [node for node, nexts in self.successors().items() if len(set(nexts)) > 1]


def merge_reference(
    trajs: Sequence[Trajectory],
    profile: Profile | ProfileConfig = DEFAULT_PROFILE,
    labels: Sequence[Sequence[Stage | None]] | None = None,
    states: Sequence[list[ProcState]] | None = None,
) -> Reference:
    """Merge the passing runs `trajs` (in the given order) into a reference graph. `labels` or
    `states` (each run's, from `run_states`) spare recomputing them: a cohort merges the same
    donors into many references. The merge copies states, so they can be shared. The graph
    alone: `reference.build_reference` keeps the donors' baseline with it too, as scoring
    under `calibrated` reads it."""
    config = get_profile(profile)
    check_donors(trajs)
    if labels is not None and len(labels) != len(trajs):
        raise ConfigError(f"{len(labels)} label lists for {len(trajs)} runs: give one per run")
    runs = states or [
        run_states(t, lab, config)
        for t, lab in zip(trajs, labels or [run_labels(t, config) for t in trajs], strict=True)
    ]
    merge = PartialMerge(config, runs[0])
    for run in runs[1:]:
        merge.add(run)
    return merge.reference(trajs)


def check_donors(trajs: Sequence[Trajectory]) -> None:
    """A reference is merged from one passing run or more."""
    if not trajs:
        raise AgentLensError("a reference needs at least one passing trajectory")
    if failed := [t.id for t in trajs if t.outcome.status == "failed"]:
        raise ConfigError(
            f"{len(failed)} of {len(trajs)} runs given as donors failed ({', '.join(failed[:3])}"
            f"{', …' if len(failed) > 3 else ''}): a reference is merged from passing runs only"
        )


class PartialMerge:
    """The runs merged so far, in order, before the graph is finished: a copy goes on with other
    runs, so references whose donors begin alike merge their common first runs once."""

    def __init__(self, config: ProfileConfig, first: list[ProcState] | None) -> None:
        self.config = config
        self.merger = _Merger(equivalence_for(config))
        if first is not None:
            self.graph = self.merger.start(first)

    def add(self, run: list[ProcState]) -> None:
        self.merger.add(self.graph, run)

    def size(self) -> int:
        """The states merged so far."""
        return len(self.graph.nodes)

    def copy(self) -> PartialMerge:
        """An independent merge of the same runs (the states copied with their support)."""
        twin = PartialMerge(self.config, None)
        twin.merger, twin.graph = self.merger.copy(self.graph)
        return twin

    def reference(self, trajs: Sequence[Trajectory]) -> Reference:
        """The finished reference of donors `trajs` (the runs merged): states consolidated,
        backward edges dropped, relabelled as the profile says. It uses this merge up."""
        ref, config = self.graph, self.config
        _consolidate(ref)
        ref.edges = [e for e in ref.edges if _forward(ref, e)]
        if config.relabel_merged:
            _relabel(ref, config)
        ref.donors = [t.id for t in trajs]
        ref.tasks = sorted({t.task_id for t in trajs if t.task_id})
        ref.profile = config.name
        return ref


def run_states(
    traj: Trajectory, labels: Sequence[Stage | None], config: ProfileConfig
) -> list[ProcState]:
    """A run's states as a reference merges them (`sdk-compat` reads the release's raw fields)."""
    if len(labels) != len(traj.steps):
        raise ConfigError(
            f"{traj.id}: {len(labels)} labels for {len(traj.steps)} steps: give one per step "
            "(None for a step that is no tool call), as `label_trajectory` returns them"
        )
    return states_from_trajectory(
        traj,
        labels,
        use_raw=config.name == "sdk-compat",
        repo_relative=config.repo_relative_paths,
    )


def run_labels(traj: Trajectory, config: ProfileConfig) -> list[Stage | None]:
    """Labels for one run: the stored release labels under `sdk-compat` when every tool step has
    one (the released labeler reproduces all of them), else the profile's labeler."""
    tools = [s for s in traj.steps if s.kind == "tool"]
    if config.name == "sdk-compat" and tools and all(s.stored_stage for s in tools):
        return [s.stored_stage if s.kind == "tool" else None for s in traj.steps]  # type: ignore[misc]
    return label_trajectory(traj, config.name)


def equivalence_for(config: ProfileConfig) -> Equivalence:
    return Equivalence(
        base_command_rule=config.base_command_rule,
        line_overlap_min=config.line_overlap_min,
        search_jaccard_min=config.search_jaccard_min,
        query_jaccard_min=config.query_jaccard_min,
    )


class _Merger:
    """Merges runs into the one reference it starts, keeping its states in step order and its
    edges' keys as it goes: sorting and collecting them again for each run grew with the graph."""

    def __init__(self, eq: Equivalence) -> None:
        self.eq = eq
        self.n_states = 0
        self.n_edges = 0
        self.ordered: list[ProcState] = []  # by step_no, ties in insertion order
        self.seen: set[tuple[str, str, str]] = set()

    def _node(self, ref_nodes: dict[str, ProcState], state: ProcState) -> str:
        self.n_states += 1
        uid = f"merged_state_{self.n_states}"
        ref_nodes[uid] = _copy(state, uid)
        return uid

    def _edge(self, source: str, target: str, action: str) -> Edge:
        self.n_edges += 1
        self.seen.add((source, target, action))
        return Edge(f"merged_trans_{self.n_edges}", source, target, action)

    def start(self, run: list[ProcState]) -> Reference:
        nodes: dict[str, ProcState] = {}
        ids = [self._node(nodes, s) for s in run]
        edges = [
            self._edge(a, b, run[i + 1].tool) for i, (a, b) in enumerate(itertools.pairwise(ids))
        ]
        self.ordered = sorted(nodes.values(), key=_step_no)
        return Reference(nodes=nodes, edges=edges, initial=ids[0], terminals=[ids[-1]])

    def copy(self, ref: Reference) -> tuple[_Merger, Reference]:
        """This merger and its reference as they are, each state copied with its support."""
        twin = _Merger(self.eq)
        twin.n_states, twin.n_edges, twin.seen = self.n_states, self.n_edges, set(self.seen)
        nodes = {uid: _copy(state, uid, state.support) for uid, state in ref.nodes.items()}
        twin.ordered = [nodes[state.uid] for state in self.ordered]
        graph = Reference(
            nodes=nodes, edges=list(ref.edges), initial=ref.initial, terminals=list(ref.terminals)
        )
        return twin, graph

    def add(self, ref: Reference, run: list[ProcState]) -> None:
        """Align `run` greedily against the states in step order; the reference must be the one
        `start` returned, changed by `add` only."""
        ordered = self.ordered
        pos, ids, new = 0, [], []
        for idx, state in enumerate(run):
            if pos < len(ordered) and self.eq.check(ordered[pos], state, idx):
                ordered[pos].support += 1
                ids.append(ordered[pos].uid)
                pos += 1
            else:
                ids.append(self._node(ref.nodes, state))
                new.append(ref.nodes[ids[-1]])
        for state in new:  # after the states of its step already there, as a stable sort puts it
            bisect.insort_right(ordered, state, key=_step_no)
        for i in range(1, len(run)):
            key = (ids[i - 1], ids[i], run[i].tool)
            if key not in self.seen:
                ref.edges.append(self._edge(*key))
        if ids[-1] not in ref.terminals:
            ref.terminals.append(ids[-1])


_step_no = operator.attrgetter("step_no")
_STATE_FIELDS = [f.name for f in fields(ProcState)]
_state_values = operator.attrgetter(*_STATE_FIELDS)
_UID, _SUPPORT = _STATE_FIELDS.index("uid"), _STATE_FIELDS.index("support")


def _copy(state: ProcState, uid: str, support: int = 1) -> ProcState:
    """`dataclasses.replace(state, uid=uid, support=support)`, a quarter of its cost: merging a
    cohort's references copies millions of states."""
    values = list(_state_values(state))
    values[_UID], values[_SUPPORT] = uid, support
    return ProcState(*values)


def _consolidate(ref: Reference) -> None:
    groups: dict[tuple[str, object], list[str]] = {}
    for uid, s in ref.nodes.items():
        rs = s.resulting_state
        if rs in NO_CONSOLIDATE:
            continue
        key = (rs, s.stage) if rs.startswith(CROSS_STEP) else (rs, s.step_no)
        groups.setdefault(key, []).append(uid)
    remap: dict[str, str] = {}
    for uids in groups.values():
        if len(uids) < 2:
            continue
        ordered = sorted(uids, key=lambda u: ref.nodes[u].step_no)
        canon = ref.nodes[ordered[0]]
        for other in ordered[1:]:
            canon.support += ref.nodes[other].support
            remap[other] = canon.uid
    if not remap:
        return
    seen: set[tuple[str, str, str]] = set()
    edges = []
    for e in ref.edges:
        src, dst = remap.get(e.source, e.source), remap.get(e.target, e.target)
        if src == dst or ref.nodes[dst].step_no < ref.nodes[src].step_no:
            continue
        if (src, dst, e.action) in seen:
            continue
        seen.add((src, dst, e.action))
        edges.append(Edge(e.id, src, dst, e.action))
    for uid in remap:
        del ref.nodes[uid]
    ref.edges = edges
    ref.terminals = list(dict.fromkeys(remap.get(t, t) for t in ref.terminals))


def _forward(ref: Reference, e: Edge) -> bool:
    src, dst = ref.nodes.get(e.source), ref.nodes.get(e.target)
    return (
        src is not None and dst is not None and e.source != e.target and dst.step_no >= src.step_no
    )


def _relabel(ref: Reference, config: ProfileConfig) -> None:
    """Label the merged states in step order, as one run (release behaviour, spec §5.2 step 5)."""
    ordered = sorted(ref.nodes.values(), key=lambda s: s.step_no)
    tools = [s for s in ordered if s.source is not None and s.source.kind == "tool"]
    if len(tools) != len(ordered) - 1:
        return
    steps = [s.source for s in tools if s.source is not None]
    for state, stage in zip(tools, label_steps(steps, config.name), strict=True):
        state.stage = stage
