"""Prompt text against the spec's wording (§4.2)."""

from __future__ import annotations

from agentlens.formats import read_path
from agentlens.stepvalue.candidates import outcome_problem
from agentlens.stepvalue.permutations import label_mapping
from agentlens.stepvalue.prompts import scoring_messages
from tests.conftest import BENCH

TRACE = sorted((BENCH / "trajectories" / "pallets__flask-5014").glob("*.json"))[0]


def test_scoring_prompt_ends_with_the_spec_mapping_lines() -> None:
    (traj,) = read_path(TRACE)
    problem = outcome_problem(traj, max_steps=1)
    ids = problem.candidate_ids
    for k in range(len(ids)):
        mapping = label_mapping(ids, k)
        for direct in (True, False):
            (_, user) = scoring_messages(problem.view, "{}", "r", mapping, direct=direct)
            # spec §4.2: "Current physical option mapping: A = candidate_id: …", then the order
            rotated = ["AB"[(i - k) % 2] for i in range(2)]  # candidate i gets labels[i - k]
            pairs = zip(rotated, ids, strict=True)
            expected = sorted(f"{label} = candidate_id: {cid}" for label, cid in pairs)
            tail = user["content"].split("Current physical option mapping:\n", 1)[1]
            assert tail.splitlines() == [*expected, "Output exactly one uppercase option label."]


def test_direct_options_layout_lists_label_id_and_text_before_the_evidence() -> None:
    (traj,) = read_path(TRACE)
    problem = outcome_problem(traj, max_steps=1)
    mapping = label_mapping(problem.candidate_ids, 1)
    (_, user) = scoring_messages(
        problem.view, "{}", None, mapping, direct=True, direct_layout="options"
    )
    text = user["content"]
    text_of = {c.id: c.text for c in problem.view.candidates}
    # spec §4.2: direct mode lists the options as "A: id - text"
    lines = [f"{label}: {cid} - {text_of[cid]}" for label, cid in sorted(mapping.items())]
    assert "Options:\n" + "\n".join(lines) + "\n\n<EVIDENCE>" in text
    assert "Current physical option mapping" not in text
    assert text.endswith("Output exactly one uppercase option label.")
    # rationale channels keep the manifest and the mapping last
    (_, scored) = scoring_messages(
        problem.view, "{}", "r", mapping, direct=False, direct_layout="options"
    )
    assert "Options:" not in scored["content"] and "option mapping" in scored["content"]
