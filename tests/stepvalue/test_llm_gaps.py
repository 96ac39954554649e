"""The spec-gap features against the real local model: an adapted open-QA file scored over HTTP
(top-k) with net_asv and the floor table, and a closed-set run in exact mode (semantic gain).

Few, short calls: the first 1–2 steps, B ≤ 2, direct channel only, short prompts.
"""

from __future__ import annotations

import json
import math
from datetime import datetime
from pathlib import Path

import pytest

from agentlens.cli import main
from agentlens.formats import read_path
from agentlens.providers import get_provider
from agentlens.stepvalue.candidates import coding_transitions
from agentlens.stepvalue.config import RunConfig
from agentlens.stepvalue.cost import CostWeights
from agentlens.stepvalue.evaluate import evaluate
from agentlens.stepvalue.model import Candidate, EvalView, Problem
from agentlens.stepvalue.outputs import write_outputs
from agentlens.stepvalue.schema import load_asv
from agentlens.stepvalue.sensitivity import EXACT_NOTE
from tests.stepvalue.test_openqa import BENCH_TRACE, task_row, write_rows

pytestmark = pytest.mark.llm
LAMBDA = 0.5
WEIGHTS = {"p": 1.0, "c": 2.0, "t": 0.1, "l": 0.01}


def expected_cost(raw: dict, state: int) -> float:
    """C of the step that produced `state_<state>`, from the raw trace JSON (latency = time since
    the previous state's timestamp)."""
    meta = raw["states"][f"state_{state}"]["metadata"]
    prev = raw["states"][f"state_{state - 1}"]["metadata"]
    seconds = (
        datetime.fromisoformat(meta["timestamp"]) - datetime.fromisoformat(prev["timestamp"])
    ).total_seconds()
    return (
        WEIGHTS["p"] * meta["input_tokens"] / 1000
        + WEIGHTS["c"] * meta["output_tokens"] / 1000
        + WEIGHTS["t"] * 1
        + WEIGHTS["l"] * seconds
    )


def test_open_qa_file_top_k_net_asv_and_floor_table(local_llm_url: str, tmp_path: Path) -> None:
    tasks = write_rows(tmp_path / "tasks.jsonl", task_row(BENCH_TRACE.stem))
    asv = tmp_path / "open.asv.jsonl"
    adapt = ["stepvalue", "adapt-open-qa", str(tasks), str(BENCH_TRACE), "-o", str(asv)]
    assert main([*adapt, "--max-steps", "2"]) == 0
    config = RunConfig(
        channels=("direct",),
        permutations=2,
        lam=LAMBDA,
        cost_weights=CostWeights(**WEIGHTS),
        max_state_chars=1200,
        max_question_chars=300,
    )
    result = evaluate(load_asv(asv), get_provider(local_llm_url, cache=False), config)
    out = tmp_path / "out"
    write_outputs(result, out)
    rows = [json.loads(line) for line in (out / "steps.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and not any(r["missing"] for r in rows)
    # step 1 follows the untimed task message: latency unknown, weighted, so net_asv unknown
    assert rows[0]["net_asv"] is None and "latency_ms not recorded" in rows[0]["reason"]
    raw = json.loads(BENCH_TRACE.read_text())
    second = rows[1]
    cost = expected_cost(raw, 2)
    assert second["step_cost"] == pytest.approx(cost)
    assert second["net_asv"] == pytest.approx(second["delta_h"] - LAMBDA * cost)
    assert second["perm_range_net_asv"] == pytest.approx(second["perm_range_delta_h"])
    assert "ΔH − λ·C" in second["reason"]
    summary = json.loads((out / "summary.json").read_text())
    (floors,) = summary["floor_sensitivity"]
    (means,) = summary["channels"]
    assert floors["n_top_k"] == 2
    # the run's own floor (−20) reproduces the run's values from the stored raw log-probs
    assert floors["mean_g_margin_floor-20"] == pytest.approx(means["mean_g_margin"])

    def g_at(row: dict, floor: float) -> float:
        def m(raw_scores: dict) -> float:
            s = {
                c: floor if v is None else math.log(sum(math.exp(max(x, floor)) for x in v))
                for c, v in raw_scores.items()
            }
            others = [v for c, v in s.items() if c != "method-not-encoded"]
            return s["method-not-encoded"] - math.log(sum(math.exp(v) for v in others))

        return m(row["raw_scores_after"]) - m(row["raw_scores_before"])

    assert floors["mean_g_margin_floor-10"] == pytest.approx(sum(g_at(r, -10) for r in rows) / 2)
    assert "Floor sensitivity" in (out / "report.md").read_text()


def test_closed_set_exact_semantic_gain(local_gguf_path: Path) -> None:
    (traj,) = read_path(BENCH_TRACE)
    verdicts = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
    view = EvalView(
        "Claim: the fix for the issue below belongs in requests/sessions.py.\n\n"
        + (traj.task or "")[:300],
        tuple(Candidate(v, f"The evidence {v.lower()} the claim.") for v in verdicts),
        "NOT ENOUGH INFO",
    )
    problem = Problem(
        traj.id, "claim", "explicit", view, "SUPPORTS", coding_transitions(traj, max_steps=1)
    )
    config = RunConfig(channels=("direct",), permutations=1, max_state_chars=1200)
    client = get_provider(f"llamacpp:{local_gguf_path}", cache=False)
    result = evaluate([problem], client, config)
    (row,) = result.steps
    emb = {"SUPPORTS": (1, 1), "REFUTES": (-1, 1), "NOT ENOUGH INFO": (0, 0)}

    def distance(belief: dict) -> float:
        x = sum(p * emb[c][0] for c, p in belief.items())
        y = sum(p * emb[c][1] for c, p in belief.items())
        return math.hypot(x - 1, y - 1)

    expected = distance(row["belief_before"]) - distance(row["belief_after"])
    assert row["semantic_gold_gain"] == pytest.approx(expected)
    assert row["exact_logits"] and row["net_asv"] == row["delta_h"]
    (floors,) = result.summary()["floor_sensitivity"]
    assert floors["note"] == EXACT_NOTE and floors["n_top_k"] == 0
