"""Scenario pairs on Ray (`agentlens run --engine ray`): each pair runs on a worker of a real
local Ray, with the real local model as the simulated user and a real agent process; the driver
keeps the output, the summary and the stop."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agentlens import __version__
from agentlens.demo.tiny_repo import DEMO_SCENARIO
from agentlens.errors import ConfigError
from agentlens.formats.jsonl import load_jsonl
from agentlens.scenarios import Fold, RunSettings, load_persona, run_fold
from agentlens.scenarios.agents import agent_factory
from agentlens.scenarios.scale_out import RayPairs, check_nodes, node_problems
from agentlens.scenarios.scenario import Scenario
from agentlens.verification import isolation
from tests.cli.conftest import Run
from tests.scenarios.conftest import INSTRUCTION, alive, found, host_pids, scripted, session_marker

pytestmark = pytest.mark.usefixtures("ray_session")


def scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({**DEMO_SCENARIO, "max_steps": 1, "user_instruction": INSTRUCTION}))
    return path


@pytest.mark.llm
def test_pairs_run_on_ray_workers_and_come_back_as_a_local_run_would(
    run_cli: Callable[..., Run], local_llm_url: str, calc_project: Path, tmp_path: Path
) -> None:
    common = ["run", str(scenario_file(tmp_path)), "--project", str(calc_project), "--agent",
              scripted("fix"), "--simulator", local_llm_url, "--persona", "default",
              "--persona", "helpful", "--no-cache", "--json"]  # fmt: skip
    on_ray = run_cli(*common, "--out", str(tmp_path / "ray"), "--engine", "ray")
    here = run_cli(*common, "--out", str(tmp_path / "here"))
    assert on_ray.code == 0 and here.code == 0, on_ray.err + here.err
    summaries = [json.loads(r.out) for r in (on_ray, here)]
    for summary in summaries:
        assert (summary["runs"], summary["formal_passed"], summary["failed_runs"]) == (2, 2, 0)
    for persona in ("default", "helpful"):
        (remote,) = load_jsonl(tmp_path / "ray" / "trajectories" / "fix_sub" / f"{persona}.jsonl")
        (local,) = load_jsonl(tmp_path / "here" / "trajectories" / "fix_sub" / f"{persona}.jsonl")
        assert remote.metadata["ray"]["pid"] != os.getpid()  # a worker ran it
        assert "ray" not in local.metadata
        assert [s.command for s in remote.steps if s.kind == "tool"] == [
            s.command for s in local.steps if s.kind == "tool"
        ]
        assert remote.outcome == local.outcome and remote.outcome.status == "passed"
        assert remote.metadata["formal"]["formal_verification_result"] == 1
        attempt = tmp_path / "ray" / "sessions" / "fix_sub" / persona / "attempt-1"
        assert (attempt / "verify.json").is_file() and (attempt / "repo" / ".git").is_dir()
    run_json = json.loads((tmp_path / "ray" / "run.json").read_text())
    assert run_json["formal_passed"] == 2


def ray_settings(
    ray_engine: Any, agent: str, simulator: str, project: Path, out: Path
) -> RunSettings:
    from agentlens.providers import get_provider

    return RunSettings(
        make_agent=agent_factory(agent),
        simulator=get_provider(simulator, role="user_simulator", cache=False),
        out=out,
        project=project,
        parallel=2,
        pairs=RayPairs(ray_engine, simulator, cache=False),
    )


def calc_scenario_on_file(tmp_path: Path, **changes: Any) -> Scenario:
    from agentlens.scenarios.scenario import load_scenario

    return replace(load_scenario(scenario_file(tmp_path)), **changes)


@pytest.mark.llm
def test_stopping_the_run_kills_the_agents_on_the_workers(
    ray_engine: Any, local_llm_url: str, calc_project: Path, tmp_path: Path
) -> None:
    marker = session_marker()
    settings = ray_settings(
        ray_engine, scripted("sleep", marker), local_llm_url, calc_project, tmp_path / "o"
    )
    fold = Fold([calc_scenario_on_file(tmp_path)], [load_persona("default")], attempts=1)

    pids: list[int] = []  # the pid it writes is its PID namespace's

    async def start_then_stop() -> None:
        run = asyncio.ensure_future(run_fold(fold, settings))
        deadline = time.monotonic() + 120
        while not found(tmp_path / "o", marker) or not host_pids(marker):
            assert time.monotonic() < deadline and not run.done(), "the agent never started"
            await asyncio.sleep(0.1)
        pids.extend(host_pids(marker))
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run

    asyncio.run(start_then_stop())
    assert settings.pairs is not None
    settings.pairs.close()  # as the CLI does on its way out
    deadline = time.monotonic() + 10
    while any(map(alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(map(alive, pids)), "the agent outlived the stopped run"


@pytest.mark.llm
def test_a_pair_whose_worker_dies_is_a_failed_run_and_the_others_go_on(
    ray_engine: Any,
    local_llm_url: str,
    calc_project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the agent kills the Ray worker that runs it: only possible outside the sandbox (which keeps
    # an agent from reaching any process but its own; tests/reviews/test_isolation.py), so this
    # test of worker-death handling runs with --no-sandbox, which the workers follow
    monkeypatch.setattr(isolation, "_default", isolation.Isolation(enabled=False))
    out = tmp_path / "o"
    settings = ray_settings(ray_engine, scripted("killhost"), local_llm_url, calc_project, out)
    scenarios = [calc_scenario_on_file(tmp_path)]
    fold = Fold(scenarios, [load_persona("default"), load_persona("helpful")], attempts=1)
    result = asyncio.run(run_fold(fold, settings))
    assert len(result.sessions) == 2 and all(s.failed for s in result.sessions)
    reasons = {s.trajectory.metadata["termination_reason"] for s in result.sessions}
    assert reasons == {
        "Setup failed: the Ray worker running it died (WorkerCrashedError: "
        + next(iter(reasons)).split("(WorkerCrashedError: ", 1)[1]
    }
    assert (out / "failed" / "fix_sub" / "default.jsonl").is_file()
    assert json.loads((out / "run.json").read_text())["failed_runs"] == 2


@pytest.mark.llm
def test_a_pair_that_raises_on_its_worker_is_a_failed_run_that_says_why(
    ray_engine: Any,
    local_llm_url: str,
    calc_project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = ray_settings(
        ray_engine, scripted("fix"), local_llm_url, calc_project, tmp_path / "o"
    )
    fold = Fold([calc_scenario_on_file(tmp_path)], [load_persona("default")], attempts=1)
    assert isinstance(settings.pairs, RayPairs)
    settings.pairs.cwd = str(tmp_path / "gone")  # injected: a folder the worker does not have
    with pytest.raises(ConfigError, match=r"^--engine ray: node .* has no folder .*gone: share"):
        asyncio.run(run_fold(fold, settings))  # as the check says, before any pair starts
    monkeypatch.setattr(RayPairs, "check", lambda *_: None)
    (session,) = asyncio.run(run_fold(fold, settings)).sessions
    reason = session.trajectory.metadata["termination_reason"]
    assert session.failed and reason.startswith(
        "Setup failed: it failed on its Ray worker (FileNotFoundError: "
    )
    assert "gone" in reason


def test_each_node_is_asked_what_it_lacks(ray_engine: Any, tmp_path: Path) -> None:
    assert check_nodes(ray_engine, [tmp_path / "out", tmp_path], "git") == []
    problems = check_nodes(ray_engine, [tmp_path / "out", tmp_path / "nowhere"], "no-such-agent")
    assert any("has no folder" in p and "nowhere" in p for p in problems)
    assert any("has no agent program 'no-such-agent' on its PATH" in p for p in problems)
    assert not list((tmp_path / "out").iterdir())  # the marker is gone
    # a node that does not share the output folder: its marker file is not there
    (lost,) = node_problems("10.0.0.9", [str(tmp_path)], str(tmp_path / "absent-marker"), None)
    assert lost.startswith("node 10.0.0.9 does not see the output folder")
    (tmp_path / "marker").write_text("")
    (other,) = node_problems("10.0.0.9", [str(tmp_path)], str(tmp_path / "marker"), None, "0.0.1")
    assert other == f"node 10.0.0.9 has agentlens {__version__}, this machine 0.0.1"


def test_an_engine_pairs_cannot_use_is_one_line(
    run_cli: Callable[..., Run], calc_project: Path, tmp_path: Path
) -> None:
    refused = run_cli("run", str(scenario_file(tmp_path)), "--project", str(calc_project),
                      "--agent", scripted("fix"), "--simulator",
                      "openai-compatible:http://127.0.0.1:9/v1#m", "--out", str(tmp_path / "o"),
                      "--engine", "processes:2")  # fmt: skip
    assert refused.code == 2 and len(refused.err.strip().splitlines()) == 1
    assert "scenario pairs run local (in this process) or on Ray" in refused.err
