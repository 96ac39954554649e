from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentlens.errors import SchemaError
from agentlens.formats import read_path
from agentlens.stepvalue.candidates import explicit_problems, outcome_problem
from agentlens.stepvalue.projection import slice_state
from agentlens.stepvalue.schema import write_asv
from tests.conftest import BENCH

TRACE = sorted((BENCH / "trajectories" / "pallets__flask-5014").glob("*.json"))[0]


def record(**task_overrides) -> dict:
    task = {
        "task_id": "t1",
        "question": "Which drug class reduces stroke risk in atrial fibrillation?",
        "candidate_space": {
            "type": "candidate_set",
            "candidates": [
                {"id": "anticoagulants", "text": "Oral anticoagulants"},
                {"id": "statins", "text": "Statins"},
                {"id": "none-of-the-above", "text": "The available evidence is insufficient."},
            ],
            "gold_candidate_id": "anticoagulants",
        },
        "gold_visible_to_evaluator": False,
    }
    task.update(task_overrides)
    steps = [
        {
            "step_id": "s1",
            "index": 0,
            "action": {"type": "retrieve"},
            "observation": {"pmid": "1"},
            "state_before": {"question": "q"},
            "state_after": {"evidence_facts": ["x"]},
        },
    ]
    return {"schema_version": "asv.v1", "trajectory_id": "traj-1", "task": task, "steps": steps}


def write(tmp_path: Path, *records: dict) -> Path:
    path = tmp_path / "asv.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


def test_explicit_record_loads_with_spec_positions(tmp_path: Path) -> None:
    (problem,) = explicit_problems(write(tmp_path, record()))
    assert problem.gold_id == "anticoagulants"
    assert problem.view.insufficiency_id == "none-of-the-above"
    (t,) = problem.transitions
    assert t.before == {"question": "q"}
    assert t.after == {"evidence_facts": ["x"], "last_observation": {"pmid": "1"}}
    assert t.phase == "retrieve"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"gold_visible_to_evaluator": True}, "gold_visible_to_evaluator"),
        (
            {
                "candidate_space": {
                    "candidates": [{"id": "a", "text": "A"}, {"id": "b", "text": "B"}],
                    "gold_candidate_id": "z",
                }
            },
            "not a candidate id",
        ),
        (
            {
                "candidate_space": {
                    "candidates": [{"id": str(i), "text": "x"} for i in range(11)],
                    "gold_candidate_id": "1",
                }
            },
            "2 to 10 candidates",
        ),
    ],
)
def test_invalid_records_name_file_line_and_reason(
    tmp_path: Path, overrides: dict, message: str
) -> None:
    path = write(tmp_path, record(), record(**overrides))
    with pytest.raises(SchemaError, match=rf"asv\.jsonl.*line 2: .*{message}"):
        explicit_problems(path)


def test_real_trajectory_round_trips_through_asv_v1(tmp_path: Path) -> None:
    (traj,) = read_path(TRACE)
    problem = outcome_problem(traj, max_steps=5)
    path = tmp_path / "frozen.jsonl"
    write_asv([problem], path)
    (loaded,) = explicit_problems(path)
    assert loaded.gold_id == problem.gold_id
    assert loaded.view.candidates == problem.view.candidates
    assert [(t.before, t.after, t.phase, t.cost) for t in loaded.transitions] == [
        (t.before, t.after, t.phase, t.cost) for t in problem.transitions
    ]
    assert loaded.redaction == problem.redaction == "span"
    assert '"gold_visible_to_evaluator": false' in path.read_text().replace('":false', '": false')


def test_closed_set_record_names_nei_as_insufficiency_and_reads_step_cost(tmp_path: Path) -> None:
    space = {
        "type": "closed_set",
        "candidates": [
            {"id": "SUPPORTS", "text": "supported"},
            {"id": "REFUTES", "text": "refuted"},
            {"id": "NOT ENOUGH INFO", "text": "not enough information"},
        ],
        "gold_candidate_id": "REFUTES",
    }
    rec = record(candidate_space=space)
    rec["steps"][0]["cost"] = {"prompt_tokens": 900, "tool_calls": 1, "risk_score": 0.5}
    (problem,) = explicit_problems(write(tmp_path, rec))
    assert problem.view.insufficiency_id == "NOT ENOUGH INFO"
    cost = problem.transitions[0].cost
    assert (cost.prompt_tokens, cost.tool_calls, cost.risk_score, cost.latency_ms) == (
        900,
        1,
        0.5,
        None,
    )


def test_after_state_without_state_after_is_the_observation_itself(tmp_path: Path) -> None:
    rec = record()
    del rec["steps"][0]["state_after"]
    rec["steps"].append(
        {"step_id": "s2", "index": 1, "action": {"type": "draft"}, "observation": "plain text"}
    )
    (problem,) = explicit_problems(write(tmp_path, rec))
    first, second = problem.transitions
    assert first.after == {
        "pmid": "1"
    }  # spec §3: "if state_after is missing, just the observation"
    assert second.after == {"last_observation": "plain text"}  # not a dict: kept under its key


def test_slices_follow_the_spec_key_list(tmp_path: Path) -> None:
    state = {
        "Question": "q",
        "completed_steps": ["retrieve"],
        "last_step": "retrieve",
        "last_status": "ok",
        "evidence_facts": {"supported_claims": ["c1"], "coverage_gaps": ["g1"]},
        "available_artifacts": ["paper:1"],
        "draft_answer": "x",
    }
    rec = record()
    rec["steps"][0]["state_after"] = state
    (problem,) = explicit_problems(write(tmp_path, rec))
    after = problem.transitions[0].after
    parts = ["evidence", "supported_claims", "contradicted_claims", "retrieval", "citation"]
    parts += ["pubmed", "pmid", "snippet", "abstract", "artifact"]  # spec §8, verbatim
    structure = {"question", "completed_steps", "last_step", "last_status"}
    is_evidence = {k: any(p in k.lower() for p in parts) for k in after}
    evidence = slice_state(after, "evidence-only")
    agent = slice_state(after, "agent-output-only")
    assert set(evidence) == {k for k in after if is_evidence[k] or k.lower() in structure}
    assert set(agent) == {k for k in after if not is_evidence[k] or k.lower() in structure}
    assert "last_observation" in agent and "last_observation" not in evidence
    assert evidence["evidence_facts"] == state["evidence_facts"]  # kept whole


def test_step_types_are_normalised_to_the_mechanism_group_spelling(tmp_path: Path) -> None:
    from agentlens.stepvalue.phases import groups_of

    rec = record()
    rec["steps"][0]["action"] = {"type": " validate-plan "}
    rec["steps"].append({"step_id": "s2", "index": 1, "action": {"type": "advisory-verify"}})
    (problem,) = explicit_problems(write(tmp_path, rec))
    phases = [t.phase for t in problem.transitions]
    assert phases == ["validate_plan", "advisory_verify"]
    assert groups_of(phases[0]) == ["task_framing"]
    assert groups_of(phases[1]) == ["internal_transformation", "self_verification"]


def test_candidate_labels_must_be_unique_after_defaults(tmp_path: Path) -> None:
    space = record()["task"]["candidate_space"]
    space["candidates"][1]["label"] = "A"  # collides with the first candidate's default A
    with pytest.raises(SchemaError, match=r"line 1: candidate labels are not unique"):
        explicit_problems(write(tmp_path, record(candidate_space=space)))
    space["candidates"][1]["label"] = "Z"
    (problem,) = explicit_problems(write(tmp_path, record(candidate_space=space)))
    assert [c.label for c in problem.view.candidates] == [None, "Z", None]
    write_asv([problem], tmp_path / "again.jsonl")
    (again,) = explicit_problems(tmp_path / "again.jsonl")
    assert [c.label for c in again.view.candidates] == [None, "Z", None]
