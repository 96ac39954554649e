"""What `agentlens run` asks for, made ready to run: fold files and scenario files merged, the
command line's limits laid over the scenarios', the agent, the simulated user and where pairs run
built, and an output folder that is resumed only with the agent it was started with."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentlens.engine.ray_engine import RayEngine
from agentlens.errors import ConfigError
from agentlens.providers import get_provider
from agentlens.scenarios.agents import BashAgentSettings, agent_factory
from agentlens.scenarios.fold import Fold, PairRunner, RunSettings, load_fold
from agentlens.scenarios.ide_errors import check_mode
from agentlens.scenarios.personas import load_persona
from agentlens.scenarios.scale_out import RayPairs
from agentlens.scenarios.scenario import Scenario, load_scenario
from agentlens.scenarios.simulated_user import SimulatorSettings


@dataclass(frozen=True)
class RunRequest:
    """The options of `agentlens run`, as given (None: the fold's or the scenario's own)."""

    agent_spec: str
    agent_resume: str | None
    simulator: str
    personas: tuple[str, ...]
    project: str | None
    out: str
    attempts: int | None
    budget: float | None
    max_steps: int | None
    timeout: float | None
    turn_timeout: float | None
    ide_errors: str | None
    ignore_mcp: bool
    agent_context_chars: int
    agent_max_tokens: int
    simulator_context_chars: int
    parallel: int | None
    engine_spec: str
    resume: bool
    no_cache: bool


def plan_fold(paths: tuple[str, ...], request: RunRequest, say: Callable[[str], None]) -> Fold:
    """The fold to run, its scenarios checked; `say` hears which MCP servers each scenario gives
    its agent and which of the user's environment variables each receives (a scenario file from
    elsewhere could name any variable, so it is said before anything runs), and which scenario
    gives the simulated user no task text (a verify-only file)."""
    fold = _merged_fold(paths, request.personas, request.attempts, request.budget)
    fold.scenarios = [_limited(s, request) for s in fold.scenarios]
    for scenario in fold.scenarios:
        check_mode(scenario.ide_errors, f"scenario {scenario.name}")
        if not (scenario.user_instruction or scenario.first_user_message):
            say(
                f"warning: scenario {scenario.name}: no user_instruction (key, or "
                "user_instruction.txt beside the file) nor first_user_message: the simulated "
                f"user's whole task is the name {scenario.name!r}"
            )
        if scenario.mcp_servers and not request.ignore_mcp:
            for line in mcp_disclosure(scenario):
                say(line)
    return fold


def mcp_disclosure(scenario: Scenario) -> list[str]:
    lines = []
    for server in scenario.mcp_servers:
        where = server.spec.get("url") or server.spec.get("command")
        given = ", ".join(f"${v}$" for v in server.variables) or "no environment variables"
        lines.append(f"scenario {scenario.name}: MCP server {server.name} ({where}) gets {given}")
    return lines


@contextmanager
def run_settings(request: RunRequest) -> Iterator[RunSettings]:
    """The agent, the simulated user and where pairs run; a pair runner started here is closed
    on leaving."""
    cache = not request.no_cache
    bash = BashAgentSettings(
        context_chars=request.agent_context_chars, max_tokens=request.agent_max_tokens
    )
    make_agent = agent_factory(
        request.agent_spec, resume=request.agent_resume, bash_settings=bash, cache=cache
    )
    client = get_provider(request.simulator, role="user_simulator", cache=cache)
    client.check_ready()  # before any pair makes its workspace
    out = Path(request.out)
    check_same_agent(out, request.agent_spec, request.agent_resume, request.resume)
    settings = RunSettings(
        make_agent=make_agent,
        simulator=client,
        out=out,
        project=Path(request.project) if request.project else None,
        run_name=out.name or "run",
        resume=request.resume,
        simulator_settings=SimulatorSettings(context_chars=request.simulator_context_chars),
        ignore_mcp=request.ignore_mcp,
        pairs=pair_runner(request.engine_spec, request.simulator, cache=cache),
    )
    settings.parallel = request.parallel or (settings.pairs.workers if settings.pairs else 1)
    try:
        yield settings
    finally:
        if settings.pairs is not None:
            settings.pairs.close()


def pair_runner(spec: str, simulator: str, *, cache: bool) -> PairRunner | None:
    """None runs pairs in this process; `ray`, `ray:auto`, `ray:ADDRESS` on Ray."""
    if spec == "local":
        return None
    name, _, address = spec.partition(":")
    if name != "ray":
        raise ConfigError(
            f"--engine {spec!r}: scenario pairs run local (in this process) or on Ray "
            "(ray, ray:auto, ray:ADDRESS)"
        )
    return RayPairs(RayEngine(address or None), simulator, cache=cache)


def _merged_fold(
    paths: tuple[str, ...], personas: tuple[str, ...], attempts: int | None, budget: float | None
) -> Fold:
    """Fold files and scenario files alike; personas and limits from the options win."""
    merged = Fold([], [])
    for raw in paths:
        path = Path(raw)
        if _is_fold(path):
            fold = load_fold(path)
            merged.scenarios += fold.scenarios
            merged.personas = merged.personas or fold.personas
            merged.budget_dollars, merged.attempts = fold.budget_dollars, fold.attempts
        else:
            merged.scenarios.append(load_scenario(path / "config.json" if path.is_dir() else path))
    if personas:
        merged.personas = [load_persona(p) for p in personas]
    merged.personas = merged.personas or [load_persona("default")]
    merged.attempts = attempts or merged.attempts
    merged.budget_dollars = budget if budget is not None else merged.budget_dollars
    return merged


def _is_fold(path: Path) -> bool:
    if path.suffix != ".json" or not path.is_file():
        return False
    try:
        return "scenario_paths" in json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, TypeError, OSError):
        return False


def _limited(scenario: Scenario, request: RunRequest) -> Scenario:
    changes: dict[str, Any] = {
        "max_steps": request.max_steps,
        "scenario_timeout_seconds": request.timeout,
        "agent_turn_timeout_seconds": request.turn_timeout,
        "ide_errors": request.ide_errors,
    }
    return replace(scenario, **{k: v for k, v in changes.items() if v is not None})


def check_same_agent(out: Path, agent: str, resume_cmd: str | None, resume: bool) -> None:
    """`--resume` with another agent would mix two agents' runs in one folder."""
    record = out / "agent.json"
    wanted = {"agent": agent, "agent_resume": resume_cmd}
    if resume and record.is_file():
        earlier = json.loads(record.read_text(encoding="utf-8"))
        if earlier != wanted:
            raise ConfigError(
                f"{out} was run with --agent {earlier.get('agent')!r}"
                f"{_resume_text(earlier.get('agent_resume'))}; resume it with the same agent"
            )
    if resume or not out.exists() or not any(out.iterdir()):
        out.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps(wanted), encoding="utf-8")


def _resume_text(command: str | None) -> str:
    return f" and --agent-resume {command!r}" if command else ""
