from __future__ import annotations

import json
from collections import Counter

import pytest

from agentlens.errors import ConfigError
from agentlens.formats import read_path, read_paths
from agentlens.stepvalue.candidates import (
    fault_localisation_problem,
    fault_localisation_space,
    outcome_problem,
)
from tests.conftest import BENCH, DATA

TASK = BENCH / "trajectories" / "psf__requests-1724"
JAVA = DATA / "swe-agent-java" / "20240825_SWE-agent_gpt-4o-2024-05-13" / "trajs"


def files_by_tool(states: list[dict], tool: str) -> set[str]:
    return {f for s in states if s.get("tool_used") == tool for f in s["files_touched"]}


def expected_gold_from_raw() -> str:
    """Most passing runs modify it: edit steps minus files the same run created (raw JSON)."""
    counts: Counter[str] = Counter()
    for path in sorted(TASK.glob("*-pass-*.json")):
        states = list(json.loads(path.read_bytes())["states"].values())
        edited = files_by_tool(states, "replace_string_in_file")
        counts.update(edited - files_by_tool(states, "create_file"))
    return max(sorted(counts), key=lambda f: counts[f])


def test_fault_localisation_from_the_runs_of_a_task() -> None:
    runs = [read_path(p)[0] for p in sorted(TASK.glob("*.json"))]
    space = fault_localisation_space(runs, k=4)
    gold = expected_gold_from_raw()
    assert space.gold_id == gold == "/requests/models.py"
    assert len(space.candidates) == 4 and gold in [c.id for c in space.candidates]
    assert "/requests/sessions.py" in [c.id for c in space.candidates]
    problem = fault_localisation_problem(runs[0], space, max_steps=3)
    assert problem.view.candidates == space.candidates
    assert len(problem.transitions) == 3
    assert all(
        t.phase in {"exploration", "implementation", "verification", "orchestration"}
        for t in problem.transitions
    )


def test_fault_localisation_gold_from_a_pta_reference_when_given() -> None:
    from agentlens.process.reference import build_reference

    runs = [read_path(p)[0] for p in sorted(TASK.glob("*.json"))]
    passing = [r for r in runs if r.outcome.status == "passed"][:5]
    reference = build_reference(passing)
    space = fault_localisation_space(runs, reference=reference)
    assert space.gold_source == "pta-reference"
    assert space.gold_id in [c.id for c in space.candidates]


def test_no_passing_edit_is_a_clear_error() -> None:
    failing = [read_path(p)[0] for p in sorted(TASK.glob("*-fail-*.json"))]
    with pytest.raises(ConfigError, match="no passing run"):
        fault_localisation_space(failing)


def test_outcome_candidates_on_a_swe_agent_java_run() -> None:
    path = JAVA / "fasterxml__jackson-core-1142.traj"
    (traj,) = read_paths([path]).trajectories
    log = (
        path.parents[1] / "logs" / "fasterxml__jackson-core-1142" / "run_instance.log"
    ).read_text()
    resolved = "resolved: True" in log
    problem = outcome_problem(traj, max_steps=4)
    assert problem.gold_id == ("resolved" if resolved else "not-resolved")
    assert problem.candidate_ids == ["resolved", "not-resolved"]
    assert len(problem.transitions) == 4
    assert problem.transitions[0].before == {}
