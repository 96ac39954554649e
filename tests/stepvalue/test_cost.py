"""net_asv = ΔH − λ·C (spec §6.1): the arithmetic by hand, and real step costs from a trace."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from itertools import pairwise
from pathlib import Path

import pytest

from agentlens.errors import ConfigError
from agentlens.formats import read_path
from agentlens.stepvalue.candidates import coding_transitions, explicit_problems, outcome_problem
from agentlens.stepvalue.cost import CostWeights, net_value, parse_weights, step_cost
from agentlens.stepvalue.model import StepCost
from agentlens.stepvalue.schema import write_asv
from agentlens.trajectory import Outcome
from tests.cli.conftest import Run, run_cli  # noqa: F401  (the fixture)
from tests.conftest import BENCH, DATA, FORMATS

TRACE = sorted((BENCH / "trajectories" / "psf__requests-1724").glob("*.json"))[0]
MINI = DATA / "mini-swe-agent-swebv" / "trajs" / "django__django-11099"


def test_parse_weights_fills_unset_weights_with_zero() -> None:
    assert parse_weights("p=0.5, t=2") == CostWeights(p=0.5, t=2.0)
    assert parse_weights("") == CostWeights()
    with pytest.raises(ConfigError, match="KEY one of p, c, t, l, r"):
        parse_weights("x=1")
    with pytest.raises(ConfigError, match="'lots' is not a number"):
        parse_weights("p=lots")


def test_cost_and_net_value_by_hand() -> None:
    cost = StepCost(
        prompt_tokens=12000, completion_tokens=500, tool_calls=1, latency_ms=2500, risk_score=0.2
    )
    weights = CostWeights(p=0.1, c=0.4, t=0.3, l=0.2, r=1.0)
    expected_c = 0.1 * 12 + 0.4 * 0.5 + 0.3 * 1 + 0.2 * 2.5 + 1.0 * 0.2  # = 2.4
    c, reason = step_cost(cost, weights)
    assert c == pytest.approx(expected_c) and "2.4000" in reason
    net = net_value(0.7, cost, 0.25, weights)
    assert net.net_asv == pytest.approx(0.7 - 0.25 * 2.4)
    assert "0.7000 − 0.25·2.4000 = 0.1000" in net.reason


def test_defaults_make_net_asv_equal_delta_h_even_without_costs() -> None:
    net = net_value(-0.3, StepCost(), 0.0, CostWeights())
    assert net.net_asv == -0.3 and "λ = 0" in net.reason


def test_an_unrecorded_weighted_component_makes_net_asv_unknown_not_zero() -> None:
    cost = StepCost(prompt_tokens=1000, tool_calls=1)  # no latency in the trace
    net = net_value(0.5, cost, 1.0, CostWeights(p=1, l=1))
    assert net.net_asv is None and "latency_ms not recorded" in net.reason
    # a zero weight never needs the component
    assert net_value(0.5, cost, 1.0, CostWeights(p=1, t=1)).net_asv == pytest.approx(0.5 - 2.0)


def test_step_costs_come_from_the_trace_usage_and_timestamps() -> None:
    raw = json.loads(TRACE.read_text())
    meta = [raw["states"][f"state_{i}"]["metadata"] for i in (1, 2, 3)]
    (traj,) = read_path(TRACE)
    first, second, third = (t.cost for t in coding_transitions(traj, max_steps=3))
    assert first.prompt_tokens == meta[0]["input_tokens"]
    assert first.completion_tokens == meta[0]["output_tokens"]
    assert first.tool_calls == 1
    assert first.latency_ms is None  # the step before it (the task message) has no timestamp
    stamps = [datetime.fromisoformat(m["timestamp"]) for m in meta]
    assert second.latency_ms == pytest.approx((stamps[1] - stamps[0]).total_seconds() * 1000)
    assert third.latency_ms == pytest.approx((stamps[2] - stamps[1]).total_seconds() * 1000)
    assert third.prompt_tokens == meta[2]["input_tokens"] and third.risk_score is None


def test_out_of_order_timestamps_give_no_latency(tmp_path: Path) -> None:
    """A real Claude Code log whose step timestamps go backwards: the step's latency is unknown,
    not negative (a negative latency made a cost a gain, and an `adapt` file unreadable)."""
    (traj,) = read_path(FORMATS / "claude-code" / "daaain-claude-code-log" / "edge_cases.jsonl")
    stamps = [s.timestamp for s in traj.steps if s.timestamp is not None]
    assert any(b < a for a, b in pairwise(stamps))  # the trace's own order
    transitions = coding_transitions(traj)
    latencies = [t.cost.latency_ms for t in transitions]
    assert None in latencies and all(v is None or v >= 0 for v in latencies)
    traj.outcome = Outcome(status="passed", source="test")  # any label: the costs are checked
    problem = replace(outcome_problem(traj), transitions=transitions)
    write_asv([problem], tmp_path / "frozen.jsonl")
    assert len(explicit_problems(tmp_path / "frozen.jsonl")[0].transitions) == len(transitions)


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--lambda", "nan", "--lambda: nan is not a finite number"),
        ("--lambda", "-inf", "--lambda: -inf is not a finite number"),
        ("--cost-weights", "p=1,t=inf", "--cost-weights: inf is not a finite number (t=inf)"),
        ("--cost-weights", "l=NaN", "--cost-weights: NaN is not a finite number (l=NaN)"),
    ],
)
def test_a_weight_that_is_no_finite_number_is_a_usage_error(
    run_cli: Callable[..., Run],  # noqa: F811
    tmp_path: Path,
    option: str,
    value: str,
    message: str,
) -> None:
    """`--lambda nan` made every net_asv NaN (null in steps.jsonl, "= nan" in the reason), and
    `--lambda inf` every one −inf, with exit 0; now it is one line and exit 2, before any work."""
    dump = tmp_path / "prompts"
    result = run_cli(
        "stepvalue", str(MINI), "--candidates", "outcome", "--evaluator", "llamacpp:/no/such.gguf",
        "--max-steps", "1", "-b", "1", "--channels", "direct", option, value,
        "--dump-prompts", str(dump),
    )  # fmt: skip
    assert result.code == 2 and result.err.strip() == f"error: {message}", result.err
    assert not dump.exists()
