"""Reference building on real AgentLens-Bench runs: supports, branches, JSON round trip, exports,
and (when the released SDK is present) the same merged graph size as the release."""

from __future__ import annotations

import json
import os
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from agentlens.errors import ConfigError
from agentlens.formats import read_path
from agentlens.process.profiles import get_profile
from agentlens.process.protocols import TaskSplit, agentlens_bench_split
from agentlens.process.pta import Edge, Reference, run_labels, run_states
from agentlens.process.pta_io import (
    reference_from_json,
    reference_to_dot,
    reference_to_json,
    reference_to_mermaid,
)
from agentlens.process.reference import build_reference
from agentlens.process.states import ProcState
from agentlens.trajectory import Trajectory
from tests.conftest import BENCH, DATA


def released_sdk() -> Path:
    """$AGENTLENS_SDK, else the release beside the shared data (`<root>/sdkapp/sdk` next to
    `<root>/shared/data`), else its old place: a default that named only the old place left
    every parity test skipped once the release moved."""
    if "AGENTLENS_SDK" in os.environ:
        return Path(os.environ["AGENTLENS_SDK"])
    places = [DATA.resolve().parents[1] / "sdkapp" / "sdk", Path("/work/oracle/agentlens-app/sdk")]
    return next((p for p in places if (p / "src").is_dir()), places[0])


SDK = released_sdk()
TASK = "psf__requests-1724"


@cache
def bench_task(task: str) -> tuple[Trajectory, ...]:
    paths = sorted((BENCH / "trajectories" / task).glob("*_pta.json"))
    return tuple(t for p in paths for t in read_path(p))


@cache
def bench_split(task: str) -> TaskSplit:
    """The protocol's donors for `task` (all dev tasks are needed for the shared random stream)."""
    by_task = {d.name: list(bench_task(d.name)) for d in (BENCH / "trajectories").iterdir()}
    return next(s for s in agentlens_bench_split(by_task) if s.task_id == task)


@cache
def bench_reference(task: str, profile: str = "sdk-compat") -> Reference:
    return build_reference(bench_split(task).donors, profile)  # type: ignore[arg-type]


def sdk_merge(paths: list[str]) -> dict:
    return sdk_merged(paths).to_dict()


def sdk_merged(paths: list[str]) -> Any:
    """The released SDK's merged graph of `paths` (no LLM); leaves `swe_trace_sdk` importable."""
    sys.path.insert(0, str(SDK / "src"))
    from swe_trace_sdk import trace

    return trace.merge([trace.load(p, format="trace") for p in paths], use_llm=False)


def test_support_counts_sum_to_the_donor_states() -> None:
    split = bench_split(TASK)
    ref = bench_reference(TASK)
    donor_states = sum(1 + len(t.tool_steps) for t in split.donors)
    assert sum(n.support for n in ref.nodes.values()) == donor_states
    assert ref.nodes[ref.initial].support == len(split.donors)
    assert len(ref.terminals) <= len(split.donors)


def test_edges_never_point_backwards_and_paths_end_at_terminals() -> None:
    ref = bench_reference(TASK)
    for edge in ref.edges:
        assert ref.nodes[edge.target].step_no >= ref.nodes[edge.source].step_no
        assert edge.source != edge.target
    paths = ref.paths()
    assert 1 <= len(paths) <= 50
    assert all(p[0].uid == ref.initial and p[-1].uid in ref.terminals for p in paths)


def test_branch_points_have_several_successors() -> None:
    ref = bench_reference(TASK)
    succ = ref.successors()
    assert ref.branch_points()
    assert all(len(set(succ[b])) > 1 for b in ref.branch_points())


def test_json_round_trip_keeps_graph_and_paths(tmp_path: Path) -> None:
    ref = bench_reference(TASK)
    path = tmp_path / "ref.json"
    path.write_text(json.dumps(reference_to_json(ref)))
    back = reference_from_json(json.loads(path.read_text()))
    assert back.edges == ref.edges and back.terminals == ref.terminals
    assert [[s.uid for s in p] for p in back.paths()] == [[s.uid for s in p] for p in ref.paths()]
    for uid, node in ref.nodes.items():
        other = back.nodes[uid]
        assert (other.stage, other.support, other.line_range) == (
            node.stage,
            node.support,
            node.line_range,
        )


def test_dot_and_mermaid_name_every_node_and_edge() -> None:
    ref = bench_reference(TASK)
    dot, mermaid = reference_to_dot(ref), reference_to_mermaid(ref)
    assert dot.startswith("digraph") and dot.count("->") == len(ref.edges)
    assert mermaid.startswith("flowchart") and mermaid.count("-->") == len(ref.edges)
    assert all(f'"{uid}"' in dot for uid in ref.nodes)


def test_paper_reference_keeps_each_donor_runs_own_labels() -> None:
    """Spec §5.2 step 5 / decision 16: the release re-labels all merged states in step order as
    one run, so the labeler's context leaks across branches; `paper` keeps per-run labels."""
    from agentlens.process.labeler import label_trajectory

    split = bench_split(TASK)
    own = {}
    for run in split.donors:
        for step, label in zip(run.steps, label_trajectory(run, "paper"), strict=True):
            own[id(step)] = label
    ref = bench_reference(TASK, "paper")
    nodes = [n for n in ref.nodes.values() if not n.is_initial]
    assert len(nodes) > 50
    assert [n.stage for n in nodes] == [own[id(n.source)] for n in nodes]


def test_a_file_that_is_not_a_reference_is_refused() -> None:
    from agentlens.errors import ConfigError

    with pytest.raises(ConfigError, match="not an AgentLens reference"):
        reference_from_json({"nodes": []})


@pytest.mark.skipif(not (SDK / "src").is_dir(), reason="released SDK not present")
@pytest.mark.parametrize("task", [TASK, "pylint-dev__pylint-4970"])
def test_same_merged_graph_as_the_released_sdk(task: str) -> None:
    split = bench_split(task)
    theirs = sdk_merge([t.source.path for t in split.donors])
    ref = bench_reference(task)
    assert len(ref.nodes) == len(theirs["states"])
    assert len(ref.edges) == len(theirs["transitions"])
    stages = {"exploration": "E", "implementation": "I", "verification": "V", "orchestration": "O"}
    want = {
        sid: (s["resulting_state"], stages.get(s["intent_stage"], ""), s["metadata"]["trace_count"])
        for sid, s in theirs["states"].items()
    }
    got = {uid: (n.resulting_state, n.stage, n.support) for uid, n in ref.nodes.items()}
    assert got == want


def test_ids_count_from_one_and_an_edge_carries_its_targets_tool() -> None:
    """As in the released merged PTAs (ground_truth/*: `merged_state_1` is the initial state,
    `merged_trans_1` leads from it to `merged_state_2`, its action the tool of that state): ids
    are compared as strings when paths are ordered (spec §6), so their numbering matters."""
    released = json.loads((BENCH / "ground_truth" / f"{TASK}_merged_pta.json").read_text())
    first = released["transitions"][0]
    assert (released["initial_state"], first["transition_id"]) == (
        "merged_state_1",
        "merged_trans_1",
    )
    assert first["action_type"] == released["states"]["merged_state_2"]["tool_used"]
    ref = bench_reference(TASK)
    edge = next(e for e in ref.edges if e.id == "merged_trans_1")
    assert (ref.initial, edge.source, edge.target) == (
        "merged_state_1",
        "merged_state_1",
        "merged_state_2",
    )
    assert edge.action == ref.nodes["merged_state_2"].tool != ""
    assert min(int(uid.rsplit("_", 1)[1]) for uid in ref.nodes) == 1


def test_every_donor_ends_at_a_terminal_and_every_state_is_reached() -> None:
    """Spec §5/§6: each donor's last state is a real terminal, and a merged graph of chains has
    no state without an edge into it but the initial one (else its paths are lost)."""
    for task in (TASK, "pallets__flask-5014"):
        ref = bench_reference(task)
        config = get_profile("sdk-compat")
        first = bench_split(task).donors[0]
        n_first = len(run_states(first, run_labels(first, config), config))
        assert ref.terminals[0] == f"merged_state_{n_first}"  # the first donor's states come first
        assert len(ref.terminals) == len(set(ref.terminals)) > 1
        reached = {e.target for e in ref.edges}
        assert [u for u in ref.nodes if u != ref.initial and u not in reached] == []


def test_paths_take_edges_in_the_order_of_their_ids_compared_as_strings() -> None:
    """Spec §6: outgoing edges are visited by transition id compared as strings, so
    `merged_trans_10` comes before `merged_trans_2`; their targets' ids sort the other way."""
    nodes = {uid: ProcState(step_no=i, uid=uid) for i, uid in enumerate(["s0", "a", "b"])}
    edges = [Edge("merged_trans_2", "s0", "a", "x"), Edge("merged_trans_10", "s0", "b", "y")]
    ref = Reference(nodes=nodes, edges=edges, initial="s0", terminals=["a", "b"])
    assert [[state.uid for state in path] for path in ref.paths()] == [["s0", "b"], ["s0", "a"]]


def test_a_failing_run_given_as_a_donor_is_refused_naming_it() -> None:
    """From Python a reference took failing runs as donors and scored runs against them with no
    word (the CLI picks passing runs; the Python caller picks their own)."""
    runs = bench_task(TASK)
    passing = [t for t in runs if t.outcome.status == "passed"][:2]
    failing = [t for t in runs if t.outcome.status == "failed"][:1]
    with pytest.raises(
        ConfigError, match=rf"1 of 3 runs given as donors failed \({failing[0].id}\)"
    ):
        build_reference(passing + failing)


def test_a_reference_echoes_as_its_size_and_donors_not_every_state() -> None:
    reference = bench_reference(TASK)
    shown = repr(reference)
    assert shown.startswith(f"Reference(tasks=['{TASK}'], profile='sdk-compat', nodes=")
    assert f"nodes={len(reference.nodes)}, edges={len(reference.edges)}" in shown
    assert len(shown) < 1_000  # a dataclass repr of every state ran to hundreds of KB
