"""Folds in the released layout, the budget rule, and `agentlens run` on the command line."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from agentlens.demo.tiny_repo import DEMO_SCENARIO
from agentlens.providers import LLMClient
from agentlens.providers.pricing import Price, PriceTable
from agentlens.providers.types import ChatResponse, TokenUsage
from agentlens.scenarios import RunSettings, load_fold, run_fold
from agentlens.scenarios.agents import agent_factory
from agentlens.scenarios.personas import BUILT_IN
from agentlens.scenarios.scenario import Scenario
from tests.cli.conftest import Run
from tests.scenarios.conftest import INSTRUCTION, scripted, session_marker
from tests.scenarios.helpers import Scripted

FIRST = "STARTING STEP [1]: fix sub() in calc/ops.py, then STOP."


def released_fold(root: Path, project: Path, *, budget: float = 5.0) -> Path:
    """workflows.json + two scenario folders (config.json, user_instruction.txt,
    first_user_message.md) + a persona file, as the released fold lays them out."""
    for name in ("fix_a", "fix_b"):
        folder = root / "scenarios" / name
        folder.mkdir(parents=True)
        config = {
            **DEMO_SCENARIO,
            "project_path": str(project),
            "max_steps": 1,
            "fixed_fst_user_message": True,
            "tags": ["workflows"],
        }
        del config["name"]
        (folder / "config.json").write_text(json.dumps(config))
        (folder / "user_instruction.txt").write_text(INSTRUCTION)
        (folder / "first_user_message.md").write_text(FIRST)
    (root / "users").mkdir()
    (root / "users" / "toxic.txt").write_text("You are impatient.\n")
    fold = {
        "budget_dollars_limit": budget,
        "num_attempts": 2,
        "scenario_paths": ["scenarios/fix_a", "scenarios/fix_b"],
        "user_paths": ["users/default.txt", "users/toxic.txt"],
    }
    (root / "workflows.json").write_text(json.dumps(fold))
    return root / "workflows.json"


def priced_run(out: Path) -> tuple[Scripted, RunSettings]:
    """The fixing agent, and a simulator whose every answer costs $0.30 (300k prompt tokens
    at $1 per million)."""
    answer = ChatResponse(text="Thanks.", usage=TokenUsage(prompt_tokens=300_000))
    provider = Scripted([answer] * 10)
    client = LLMClient(provider, prices=PriceTable({"sim": Price(1.0, 1.0, 0.0)}))
    return provider, RunSettings(
        make_agent=agent_factory(scripted("fix")), simulator=client, out=out
    )


def test_released_fold_layout_loads(calc_project: Path, tmp_path: Path) -> None:
    fold = load_fold(released_fold(tmp_path, calc_project))
    assert [s.name for s in fold.scenarios] == ["fix_a", "fix_b"]
    first = fold.scenarios[0]
    assert (first.user_instruction, first.first_user_message) == (INSTRUCTION, FIRST)
    assert first.fixed_first_message and first.max_steps == 1 and first.tags == ["workflows"]
    # users/default.txt is absent: our wording of the released persona stands in for it
    assert [(p.name, p.text) for p in fold.personas] == [
        ("default", BUILT_IN["default"]),
        ("toxic", "You are impatient."),
    ]
    assert (fold.budget_dollars, fold.attempts) == (5.0, 2)


def test_fixed_first_messages_and_one_step_need_no_simulator_call(
    calc_project: Path, tmp_path: Path
) -> None:
    """The fixed first message goes to the agent verbatim, and with max_steps 1 the run ends
    after the agent's answer to it: the simulator is never asked, so nothing is spent."""
    fold = load_fold(released_fold(tmp_path / "fold", calc_project, budget=0.5))
    provider, settings = priced_run(tmp_path / "out")
    result = asyncio.run(run_fold(fold, settings))
    assert provider.requests == [] and result.skipped == []
    assert result.sessions[0].trajectory.steps[0].text == FIRST
    assert len(result.sessions) == 4 and result.summary()["formal_passed"] == 4
    # the scenario's tags ride on each trajectory: they choose the metric set `review` uses
    assert [s.trajectory.metadata["scenario_tags"] for s in result.sessions] == [["workflows"]] * 4


def test_budget_exceeded_skips_the_remaining_pairs(calc_project: Path, tmp_path: Path) -> None:
    fold = load_fold(released_fold(tmp_path / "fold", calc_project, budget=0.5))
    for scenario in fold.scenarios:
        scenario.max_steps = 2  # one simulator reply per pair: $0.30 each
    _, settings = priced_run(tmp_path / "out")
    result = asyncio.run(run_fold(fold, settings))
    # $0.30 after pair 1, $0.60 > $0.50 after pair 2: pairs 3 and 4 are skipped
    assert len(result.sessions) == 2 and result.skipped == [
        ("fix_b", "default"),
        ("fix_b", "toxic"),
    ]
    assert result.spent == pytest.approx(0.6)
    saved = json.loads((tmp_path / "out" / "run.json").read_text())
    assert saved["skipped_over_budget"] == ["fix_b/default", "fix_b/toxic"]


@pytest.mark.llm
def test_cli_run_prints_the_table_and_exits_0(
    run_cli: Callable[..., Run], local_llm_url: str, calc_project: Path, tmp_path: Path
) -> None:
    scenario = tmp_path / "scenario.json"
    scenario.write_text(
        json.dumps(
            {**DEMO_SCENARIO, "max_steps": 1, "user_instruction": INSTRUCTION, "tags": ["testing"]}
        )
    )
    out = tmp_path / "runs" / "nightly"
    result = run_cli(
        "run",
        str(scenario),
        "--project",
        str(calc_project),
        "--agent",
        scripted("fix"),
        "--simulator",
        local_llm_url,
        "--out",
        str(out),
        "--persona",
        "helpful",
        "--store",
        str(tmp_path / "results.db"),
    )
    assert result.code == 0, result.err
    assert "fix_sub / helpful" in result.out and "PASS" in result.out
    assert "formal pass rate 100.0% (1/1" in result.out
    listed = run_cli("inspect", str(out / "trajectories"))
    assert listed.code == 0 and "nightly/fix_sub/helpful" in listed.out

    from agentlens.formats.jsonl import load_jsonl
    from agentlens.store import open_store

    with open_store(str(tmp_path / "results.db")) as store:
        (stored,) = store.runs(kind="scenario")
        (record,) = store.records(stored.id)
        trajectory = store.trajectory(record.trajectory)
    assert stored.label == "nightly" and stored.summary["formal_passed"] == 1
    assert record.metric("formal_passed").value == 1.0
    assert record.metric("termination").label == trajectory.metadata["termination"]
    assert trajectory.metadata["scenario_tags"] == ["testing"]
    assert [trajectory] == load_jsonl(out / "trajectories" / "fix_sub" / "helpful.jsonl")

    report = tmp_path / "report.html"
    assert (
        run_cli(
            "report", stored.id, "--store", str(tmp_path / "results.db"), "-o", str(report)
        ).code
        == 0
    )
    page = report.read_text()
    assert (
        '<td>helpful</td><td class="num">1</td><td class="num">0</td><td class="num">1</td><td>100.0%</td>'
        in page
    )
    assert re.search(f'<td>{re.escape(trajectory.id)}</td><td title="[^"]*">PASS</td>', page)


def test_cli_errors_are_one_line(
    run_cli: Callable[..., Run], calc_project: Path, tmp_path: Path
) -> None:
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps(DEMO_SCENARIO))
    bad_agent = run_cli(
        "run",
        str(scenario),
        "--project",
        str(calc_project),
        "--agent",
        "codex",
        "--simulator",
        "openai-compatible:http://127.0.0.1:9/v1#m",
        "--out",
        str(tmp_path / "o"),
    )
    assert bad_agent.code == 2 and "is not 'bash:<model>' or 'cmd:<command line>'" in bad_agent.err
    no_project = run_cli(
        "run",
        str(scenario),
        "--agent",
        scripted("fix"),
        "--simulator",
        "openai-compatible:http://127.0.0.1:9/v1#m",
        "--out",
        str(tmp_path / "o"),
    )
    assert no_project.code == 2 and "names no project_path; give --project" in no_project.err
    assert "Traceback" not in bad_agent.err + no_project.err


def test_an_unreachable_simulator_fails_the_run_and_is_retried(
    calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    """A real connection refused: the run is a failure (not the agent's), retried, left out."""
    from agentlens.providers import get_provider
    from agentlens.providers.retry import RetryPolicy
    from agentlens.scenarios import Fold, Stop, load_persona

    simulator = get_provider(
        "openai-compatible:http://127.0.0.1:9/v1#m", cache=False, retry=RetryPolicy(max_attempts=1)
    )
    fold = Fold([calc_scenario], [load_persona("default")], attempts=2)
    settings = RunSettings(
        make_agent=agent_factory(scripted("fix")), simulator=simulator, out=tmp_path / "out",
        project=calc_project,
    )  # fmt: skip
    result = asyncio.run(run_fold(fold, settings))
    assert [a.termination.stop for a in result.attempts] == [Stop.SIMULATOR_ERROR] * 2
    assert "Simulated user failed" in result.sessions[0].termination.reason
    assert result.summary()["failed_runs"] == 1


def test_pairs_run_at_once_with_parallel(
    calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    """Two pairs whose agent overruns a 2 s turn: with parallel=2 each starts before the other
    ends (their dialogs overlap), and results keep the fold's order."""
    from dataclasses import replace

    from agentlens.scenarios import Fold, load_persona

    scenario = replace(calc_scenario, agent_turn_timeout_seconds=2.0)
    fold = Fold([scenario], [load_persona("default"), load_persona("toxic")], attempts=1)
    provider = Scripted([ChatResponse(text="Please fix sub().")] * 4)
    settings = RunSettings(
        make_agent=agent_factory(scripted("sleep", session_marker())),
        simulator=LLMClient(provider), out=tmp_path / "out", project=calc_project, parallel=2,
    )  # fmt: skip
    result = asyncio.run(run_fold(fold, settings))
    first, second = (s.trajectory for s in result.sessions)
    assert (first.metadata["persona"], second.metadata["persona"]) == ("default", "toxic")
    starts = [datetime.fromisoformat(t.metadata["started_at"]) for t in (first, second)]
    ends = [
        s + timedelta(seconds=t.metadata["dialog_seconds"])
        for s, t in zip(starts, (first, second), strict=True)
    ]
    assert min(t.metadata["dialog_seconds"] for t in (first, second)) >= 2.0
    assert max(starts) < min(ends)


def test_resume_keeps_finished_pairs_and_runs_the_rest(calc_project: Path, tmp_path: Path) -> None:
    fold = load_fold(released_fold(tmp_path / "fold", calc_project))
    fold.scenarios = fold.scenarios[:1]
    out = tmp_path / "out"
    both = list(fold.personas)
    fold.personas = both[:1]  # the "interrupted" first run finished only the default pair

    def settings(resume: bool) -> RunSettings:
        client = LLMClient(Scripted([]))  # fixed first message, max_steps 1: no simulator call
        return RunSettings(
            make_agent=agent_factory(scripted("fix")), simulator=client, out=out, resume=resume
        )

    asyncio.run(run_fold(fold, settings(resume=False)))
    kept = out / "sessions" / "fix_a" / "default" / "attempt-1" / "turn-1.jsonl"
    before = kept.stat().st_mtime_ns
    fold.personas = both
    result = asyncio.run(run_fold(fold, settings(resume=True)))
    summary = result.summary()
    assert (summary["resumed"], summary["runs"], summary["formal_passed"]) == (1, 2, 2)
    assert kept.stat().st_mtime_ns == before  # the finished pair's agent did not run again
    assert [s.trajectory.metadata["persona"] for s in result.sessions] == ["default", "toxic"]
    assert result.sessions[0].verification is not None and result.sessions[0].verification.passed


def test_relative_out_and_project_paths_run_the_agent(
    calc_project: Path, calc_scenario: Scenario, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--out runs/new` as the docs write it: the sandbox is entered at the workspace's real
    path, so the agent starts (it used to fail with bwrap's "Can't chdir to out/…/repo")."""
    from tests.scenarios.helpers import fixed_run

    monkeypatch.chdir(tmp_path)
    result = fixed_run(calc_scenario, Path(calc_project.name), Path("runs") / "new")
    (session,) = result.sessions
    meta = session.trajectory.metadata
    assert meta["termination"] == "max_user_messages", meta["termination_reason"]
    assert result.summary()["formal_passed"] == 1


def test_a_scenario_run_gives_compare_and_qi_its_formal_results(
    run_cli: Callable[..., Run], calc_project: Path, calc_scenario: Scenario, tmp_path: Path
) -> None:
    """The release gate of reviews.md (`compare runs/anchor runs/new --a-verify
    runs/anchor/verify.json …`) on two scenario runs: OUT/verify.json is an `agentlens verify
    --out` file, so the formal check is there (it used to be absent: no such file)."""
    from tests.scenarios.helpers import fixed_run

    for name in ("anchor", "new"):
        fixed_run(calc_scenario, calc_project, tmp_path / name)
    a, b = tmp_path / "anchor", tmp_path / "new"
    result = run_cli(
        "compare", str(a / "trajectories"), str(b / "trajectories"), "--json",
        "--a-verify", str(a / "verify.json"), "--b-verify", str(b / "verify.json"),
    )  # fmt: skip
    checks = {c["name"]: c for c in json.loads(result.out)["checks"]}
    formal = checks["formal verification"]
    assert formal["reason"].startswith("1/1 vs 1/1 passed"), result.err
    assert not formal["warning"]  # the exit code is not pinned: real times differ run to run
    qi = run_cli("qi", "--verify", str(b / "verify.json"), "--component", "EndResult=1", "--json")
    assert json.loads(qi.out)["components"]["Formal"] == 1.0, qi.out + qi.err
