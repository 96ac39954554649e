"""Step value against the real local model: top-k over HTTP and exact in-process.

Few, short calls: 2-step slices of real trajectories, B = 2, a 16-token rationale, short prompts.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from agentlens.formats import read_path, read_paths
from agentlens.providers import get_provider
from agentlens.stepvalue.candidates import (
    fault_localisation_problem,
    fault_localisation_space,
    outcome_problem,
)
from agentlens.stepvalue.config import RunConfig
from agentlens.stepvalue.evaluate import evaluate
from agentlens.stepvalue.outputs import write_outputs
from tests.conftest import BENCH, DATA

pytestmark = pytest.mark.llm
TASK = BENCH / "trajectories" / "psf__requests-1724"
JAVA = DATA / "swe-agent-java" / "20240825_SWE-agent_gpt-4o-2024-05-13" / "trajs"
SHORT = {"max_question_chars": 300, "max_state_chars": 1200, "leak_policy": "warn"}


def logit_gold(belief: dict[str, float], gold: str) -> float:
    return math.log(belief[gold]) - math.log(1 - belief[gold])


def test_top_k_over_http_fault_localisation(local_llm_url: str, tmp_path: Path) -> None:
    runs = [read_path(p)[0] for p in sorted(TASK.glob("*.json"))]
    problem = fault_localisation_problem(runs[2], fault_localisation_space(runs), max_steps=2)
    config = RunConfig(
        channels=("direct", "generated-rationale-128"), rationale_tokens=16, permutations=2, **SHORT
    )
    result = evaluate([problem], get_provider(local_llm_url, cache=False), config)
    costs = result.costs
    assert costs.distinct_states == 3
    assert costs.rationale_calls == 3
    assert costs.scoring_calls == 3 * 2 * 2
    assert costs.naive_calls == 2 * 2 * (2 * 2 + 1)
    states = {(s["state"], s["channel"]): s for s in result.states}
    for state in result.states:
        for belief, sources in zip(state["beliefs"], state["sources"], strict=True):
            assert sum(belief.values()) == pytest.approx(1.0)
            assert set(sources) <= {"top_k", "floor"}
    for row in result.steps:
        before = states[(row["state_before"], row["channel"])]["beliefs"][0]
        after = states[(row["state_after"], row["channel"])]["beliefs"][0]
        # lse margin on raw scores = log-odds of the gold belief (the softmax constant cancels)
        expected = logit_gold(after, problem.gold_id) - logit_gold(before, problem.gold_id)
        assert row["g_margin"] == pytest.approx(expected, abs=1e-6)
    paths = write_outputs(result, tmp_path)
    summary = json.loads(paths["summary"].read_text())
    assert summary["costs"]["evaluator_calls"] == 15
    assert {c["channel"] for c in summary["channels"]} == {"direct", "generated-rationale-16"}
    assert "generated-rationale-16" in paths["report"].read_text()
    assert len(paths["steps"].read_text().splitlines()) == 2 * 2


def test_exact_in_process_outcome_on_swe_agent_java(local_gguf_path: Path) -> None:
    (traj,) = read_paths([JAVA / "googlecontainertools__jib-4035.traj"]).trajectories
    problem = outcome_problem(traj, max_steps=2)
    client = get_provider(f"llamacpp:{local_gguf_path}", cache=False)
    result = evaluate([problem], client, RunConfig(channels=("direct",), permutations=2, **SHORT))
    assert result.costs.scoring_calls == 3 * 2
    for state in result.states:
        assert all(set(s) == {"exact"} for s in state["sources"])
    for row in result.steps:
        assert not row["missing"] and "used_floor_score" not in row["flags"]
        assert row["gold_rank_before"] in (1, 2)
        assert row["perm_mean_g_margin"] == pytest.approx(
            (row["g_margin"] + _second_perm_g(result, row)) / 2
        )


def _second_perm_g(result, row) -> float:
    states = {(s["state"], s["channel"]): s for s in result.states}
    gold = result.problems[0].gold_id
    before = states[(row["state_before"], row["channel"])]["beliefs"][1]
    after = states[(row["state_after"], row["channel"])]["beliefs"][1]
    return logit_gold(after, gold) - logit_gold(before, gold)
