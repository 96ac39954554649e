"""A hand-edited `asv.v1` candidate file whose step costs are negative: refused in one line naming
the file, line and field (a negative count would make a step's cost a gain in net_asv)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentlens.cli import main
from tests.conftest import BENCH

RUN = (
    BENCH
    / "trajectories"
    / "psf__requests-1724"
    / "psf__requests-1724-logs-gpt-4o-fail-25018754982_pta.json"
)


@pytest.mark.parametrize(
    ("field", "value"), [("prompt_tokens", -100), ("tool_calls", -1), ("latency_ms", -5.0)]
)
def test_a_negative_step_cost_is_refused(
    field: str, value: float, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frozen = tmp_path / "runs.asv.jsonl"
    assert main(["stepvalue", "adapt", str(RUN), "--candidates", "outcome", "-o", str(frozen)]) == 0
    record = json.loads(frozen.read_text())
    ids = [c["id"] for c in record["task"]["candidate_space"]["candidates"]]
    for step in record["steps"]:
        step["belief_before"] = {ids[0]: 0.5, ids[1]: 0.5}
        step["belief_after"] = {ids[0]: 0.6, ids[1]: 0.4}
    record["steps"][0]["cost"] = {field: value}
    bad = tmp_path / "bad.asv.jsonl"
    bad.write_text(json.dumps(record) + "\n")
    capsys.readouterr()
    args = ["stepvalue", "--candidates", str(bad), "--evaluator", "provided"]
    code = main([*args, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err == (
        f"error: {bad} [asv.v1]: line 1: Expected `{type(value).__name__}` >= 0"
        f"{'.0' if isinstance(value, float) else ''} - at `$.steps[0].cost.{field}`"
    )
