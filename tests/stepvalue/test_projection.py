from __future__ import annotations

import json

from agentlens.formats import read_path
from agentlens.stepvalue.candidates import outcome_problem
from agentlens.stepvalue.plan import state_table
from agentlens.stepvalue.projection import (
    MAX_FACT_CHARS,
    MAX_FACTS,
    coding_states,
    render_state,
    slice_state,
)
from tests.conftest import BENCH

TRACE = BENCH / "trajectories" / "sympy__sympy-12481"


def first_trace():
    return sorted(TRACE.glob("*.json"))[0]


def test_states_chain_and_limits_on_a_real_trace() -> None:
    path = first_trace()
    raw = json.loads(path.read_bytes())
    (traj,) = read_path(path)
    states = coding_states(traj)
    assert len(states) == len(raw["states"])  # initial state + one per tool call
    edited = {
        f
        for s in raw["states"].values()
        if s.get("tool_used") in ("replace_string_in_file", "create_file")
        for f in s.get("files_touched") or []
    }
    assert set(states[-1]["files_changed"]) == edited
    for state in states[1:]:
        assert len(state["evidence_facts"]) <= MAX_FACTS
        assert all(len(fact) <= MAX_FACT_CHARS for fact in state["evidence_facts"])
        assert len(render_state(state, policy="span")) <= 6000


def test_after_state_is_next_before_state_so_states_are_shared() -> None:
    (traj,) = read_path(first_trace())
    problem = outcome_problem(traj, max_steps=6)
    table = state_table(problem, "full", 6000)
    assert table.pairs == [(i, i + 1) for i in range(6)]
    assert len(table.texts) == 7  # 6 transitions share 7 states, not 12


def test_slices_split_evidence_from_agent_output() -> None:
    (traj,) = read_path(first_trace())
    state = coding_states(traj, upto=3)[-1]
    evidence = slice_state(state, "evidence-only")
    agent = slice_state(state, "agent-output-only")
    assert "evidence_facts" in evidence and "agent_notes" not in evidence
    assert "agent_notes" in agent and "evidence_facts" not in agent
    assert evidence["last_step"] == agent["last_step"] == state["last_step"]


def test_extractive_buffer_keeps_only_evidence_lines() -> None:
    from agentlens.stepvalue.channels import MAX_EXTRACT_LINES, extractive_buffer

    (traj,) = read_path(first_trace())
    state = coding_states(traj, upto=10)[-1]
    lines = extractive_buffer(state, "span").splitlines()
    facts = [line for line in lines if line.startswith("evidence_facts[")]
    assert 0 < len(facts) == min(len(state["evidence_facts"]), MAX_EXTRACT_LINES)
    assert len(lines) <= MAX_EXTRACT_LINES
    assert not any(line.startswith("agent_notes") for line in lines)
