"""`agentlens run SCENARIO… --agent SPEC --out DIR`: scenario runs with a simulated user."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.progress import Progress
from rich.table import Table
from rich.text import Text

from agentlens.cli._app import WIDE, console, err_console
from agentlens.cli._sandbox_option import sandbox_option
from agentlens.cli._store_option import label_option, save_run, store_option
from agentlens.errors import ConfigError

if TYPE_CHECKING:
    from agentlens.reviews.scenario import Scenario
    from agentlens.scenarios import Fold, FoldResult, RunSettings, SessionResult
    from agentlens.scenarios.fold import PairRunner


@click.command()
@click.argument("scenarios", nargs=-1, required=True, type=click.Path(exists=True))
@click.option(
    "--agent",
    "agent_spec",
    required=True,
    help="The agent under test: 'bash:<model>' (built-in shell agent) or 'cmd:<command line>' "
    "with {message}, {workdir}, {turn}, {trace}, {mcp_config} placeholders (its trace: stdout, "
    "or {trace}; {mcp_config}: the scenario's MCP servers as an mcpServers JSON file).",
)
@click.option(
    "--agent-resume", default=None, help="cmd: agents: the command line for turns after the first."
)
@click.option(
    "--simulator",
    default="user_simulator",
    show_default=True,
    help="Model string or role name of the simulated user.",
)
@click.option(
    "--persona",
    "personas",
    multiple=True,
    help="default, helpful, toxic, or a file (repeatable). Default: the fold's, else default.",
)
@click.option(
    "--project",
    type=click.Path(exists=True, file_okay=False),
    default=None,
    help="Project to copy for each run (default: each scenario's project_path).",
)
@click.option("--out", type=click.Path(file_okay=False), required=True, help="Output folder.")
@click.option(
    "--attempts",
    type=click.IntRange(min=1),
    default=None,
    help="Tries per pair while it ends in a failure (default: the fold's, else 3).",
)
@click.option(
    "--budget",
    type=click.FloatRange(min=0),
    default=None,
    help="Dollars the simulated user may spend (default: the fold's, else 5).",
)
@click.option(
    "--max-steps",
    type=click.IntRange(min=1),
    default=None,
    help="User messages per run (overrides the scenarios'; spec default 10).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=None,
    help="Seconds per run (overrides the scenarios'; spec default 1200).",
)
@click.option(
    "--turn-timeout",
    type=click.FloatRange(min=1),
    default=None,
    help="Seconds per agent turn (overrides the scenarios'; spec default 900).",
)
@click.option(
    "--ide-errors",
    type=click.Choice(["auto", "ruff", "none"]),
    default=None,
    help="IDE errors shown to the simulated user and the judge (overrides the scenarios'; "
    "default auto: ruff's error rules on changed Python files when ruff is installed).",
)
@click.option(
    "--ignore-mcp",
    is_flag=True,
    help="Run scenarios that name MCP servers without handing them to the agent.",
)
@click.option(
    "--agent-context-chars",
    type=click.IntRange(min=1000),
    default=60_000,
    show_default=True,
    help="bash: agent: conversation kept per call (about 8000 for a 4k-token local model).",
)
@click.option(
    "--agent-max-tokens",
    type=click.IntRange(min=16),
    default=800,
    show_default=True,
    help="bash: agent: answer limit per model call.",
)
@click.option(
    "--simulator-context-chars",
    type=click.IntRange(min=2000),
    default=100_000,
    show_default=True,
    help="Simulated user: request size; older turns are left out (about 8000 for 4k-token models).",
)
@click.option(
    "--parallel",
    type=click.IntRange(min=1),
    default=None,
    help="Pairs at once (default 1; with --engine ray, the cluster's CPUs).",
)
@click.option(
    "--engine",
    "engine_spec",
    default="local",
    show_default=True,
    help="Where pairs run: local (this process), ray (a local Ray), ray:auto or ray:ADDRESS (a "
    "cluster whose nodes share the output and project folders at the same paths).",
)
@click.option(
    "--resume",
    is_flag=True,
    help="Keep the pairs an earlier (interrupted) run already finished in --out; run the rest.",
)
@click.option("--no-cache", is_flag=True, help="Do not reuse cached model answers.")
@click.option("--json", "as_json", is_flag=True, help="Print the run summary as JSON.")
@store_option
@label_option
@sandbox_option
def run(
    scenarios: tuple[str, ...],
    agent_spec: str,
    agent_resume: str | None,
    simulator: str,
    personas: tuple[str, ...],
    project: str | None,
    out: str,
    attempts: int | None,
    budget: float | None,
    max_steps: int | None,
    timeout: float | None,
    turn_timeout: float | None,
    ide_errors: str | None,
    ignore_mcp: bool,
    agent_context_chars: int,
    agent_max_tokens: int,
    simulator_context_chars: int,
    parallel: int | None,
    engine_spec: str,
    resume: bool,
    no_cache: bool,
    as_json: bool,
    store_url: str | None,
    run_label: str | None,
) -> int:
    """Run each scenario × persona: the agent works in a copy of the project while a simulated
    user drives the dialog; each run is formally verified. Exit 1 if a run failed or was skipped."""
    from agentlens.providers import get_provider
    from agentlens.scenarios import RunSettings, SimulatorSettings
    from agentlens.scenarios.agents import BashAgentSettings, agent_factory
    from agentlens.scenarios.ide_errors import check_mode

    fold = _fold(scenarios, personas, attempts, budget)
    limits = (max_steps, timeout, turn_timeout, ide_errors)
    fold.scenarios = [_limited(s, *limits) for s in fold.scenarios]
    for scenario in fold.scenarios:
        check_mode(scenario.ide_errors, f"scenario {scenario.name}")
        if scenario.mcp_servers and not ignore_mcp:
            _say_mcp(scenario)
    bash = BashAgentSettings(context_chars=agent_context_chars, max_tokens=agent_max_tokens)
    make_agent = agent_factory(
        agent_spec, resume=agent_resume, bash_settings=bash, cache=not no_cache
    )
    client = get_provider(simulator, role="user_simulator", cache=not no_cache)
    _check_same_agent(Path(out), agent_spec, agent_resume, resume)
    settings = RunSettings(
        make_agent=make_agent,
        simulator=client,
        out=Path(out),
        project=Path(project) if project else None,
        run_name=Path(out).name or "run",
        resume=resume,
        simulator_settings=SimulatorSettings(context_chars=simulator_context_chars),
        ignore_mcp=ignore_mcp,
        pairs=_pair_runner(engine_spec, simulator, cache=not no_cache),
    )
    settings.parallel = parallel or (settings.pairs.workers if settings.pairs else 1)
    try:
        return _run_fold(fold, settings, out, as_json, store_url, run_label, agent_spec, simulator)
    finally:
        if settings.pairs is not None:
            settings.pairs.close()


def _say_mcp(scenario: Scenario) -> None:
    """Which servers the agent is given and which of your environment variables each receives:
    a scenario file from elsewhere could name any variable, so say it before anything runs."""
    for server in scenario.mcp_servers:
        where = server.spec.get("url") or server.spec.get("command")
        given = ", ".join(f"${v}$" for v in server.variables) or "no environment variables"
        line = f"scenario {scenario.name}: MCP server {server.name} ({where}) gets {given}"
        err_console.print(Text(line), soft_wrap=True)


def _pair_runner(spec: str, simulator: str, *, cache: bool) -> PairRunner | None:
    if spec == "local":
        return None
    name, _, address = spec.partition(":")
    if name != "ray":
        raise ConfigError(
            f"--engine {spec!r}: scenario pairs run local (in this process) or on Ray "
            "(ray, ray:auto, ray:ADDRESS)"
        )
    from agentlens.engine.ray_engine import RayEngine
    from agentlens.scenarios.scale_out import RayPairs

    return RayPairs(RayEngine(address or None), simulator, cache=cache)


def _run_fold(
    fold: Fold,
    settings: RunSettings,
    out: str,
    as_json: bool,
    store_url: str | None,
    run_label: str | None,
    agent_spec: str,
    simulator: str,
) -> int:
    from agentlens.scenarios import run_fold
    from agentlens.scenarios.signals import run_stoppable

    pairs = len(fold.scenarios) * len(fold.personas)
    finished: list[SessionResult] = []

    def done(session: SessionResult) -> None:  # a line per pair as it ends: runs take minutes
        finished.append(session)
        progress.advance(task)
        name, _, users, steps, verdict, seconds = _row(session)
        progress.console.print(Text(f"{name}  {verdict}  ({users}, {steps} steps, {seconds})"))

    with Progress(console=err_console, transient=True) as progress:
        task = progress.add_task("scenario runs", total=pairs)
        try:  # SIGTERM/SIGHUP cancel the run like Ctrl-C; cancelling kills the agents' processes
            result = run_stoppable(run_fold(fold, settings, on_session=done))
        except KeyboardInterrupt:
            err_console.print(
                Text(
                    f"stopped: {len(finished)} of {pairs} pairs finished and are kept in {out}; "
                    "the same command with --resume runs the rest"
                )
            )
            raise
    summary = result.summary()
    if store_url:
        _store(store_url, run_label or Path(out).name, agent_spec, simulator, result)
    if as_json:
        console.print_json(json.dumps(summary))
    else:
        _print(result, Path(out))
    return 1 if summary["failed_runs"] or summary["skipped_over_budget"] else 0


def _store(url: str, label: str, agent: str, simulator: str, result: FoldResult) -> None:
    from agentlens.store import Run
    from agentlens.store.records import scenario_records

    sessions = result.sessions
    summary = {k: v for k, v in result.summary().items() if k != "sessions"}
    run = Run(
        kind="scenario",
        scorer="scenario/formal/1",
        label=label,
        settings={"agent": agent, "simulator": simulator},
        summary=summary,
    )
    save_run(url, run, [s.trajectory for s in sessions], scenario_records(sessions))


def _fold(
    paths: tuple[str, ...], personas: tuple[str, ...], attempts: int | None, budget: float | None
) -> Fold:
    """Fold files and scenario files alike; personas and limits from the options win."""
    from agentlens.reviews.scenario import load_scenario
    from agentlens.scenarios import Fold, load_fold, load_persona

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


def _limited(
    scenario: Scenario,
    max_steps: int | None,
    timeout: float | None,
    turn_timeout: float | None,
    ide_errors: str | None,
) -> Scenario:
    changes: dict[str, Any] = {
        "max_steps": max_steps,
        "scenario_timeout_seconds": timeout,
        "agent_turn_timeout_seconds": turn_timeout,
        "ide_errors": ide_errors,
    }
    return replace(scenario, **{k: v for k, v in changes.items() if v is not None})


def _print(result: FoldResult, out: Path) -> None:
    rows = [_row(session) for session in result.sessions]
    if console.width >= WIDE:
        table = Table("scenario / persona", "ended", "user", "steps", "formal", "time")
        for row in rows:
            table.add_row(*row[:1], Text(row[1]), *row[2:])
        console.print(table)
    else:  # a table of six columns folds every cell below WIDE: two lines per run read better
        for name, ended, users, steps, verdict, seconds in rows:
            console.print(Text(f"{name}  {verdict}  ({users}, {steps} steps, {seconds})"))
            console.print(Text(f"  ended: {ended}"))
    summary = result.summary()
    rate = summary["formal_pass_rate"]
    counted = summary["runs"] - summary["failed_runs"]
    console.print(
        f"formal pass rate {'-' if rate is None else f'{rate:.1%}'} "
        f"({summary['formal_passed']}/{counted}; failed runs left out: {summary['failed_runs']}) · "
        f"simulator spend ${summary['simulator_spend_dollars']:.4f}"
    )
    if summary["resumed"]:
        console.print(f"resumed: {summary['resumed']} pairs kept from the earlier run in {out}")
    for pair in summary["skipped_over_budget"]:
        err_console.print(Text(f"skipped (budget spent): {pair}"))
    console.print(f"trajectories: {out / 'trajectories'} (agentlens review / telemetry / qi)")
    if summary["failed_runs"]:
        console.print(f"failed runs (left out): {out / 'failed'}")


def _row(session: SessionResult) -> tuple[str, str, str, str, str, str]:
    meta = session.trajectory.metadata
    users = int(meta["user_messages"])
    return (
        f"{meta['scenario']} / {meta.get('persona')}",
        str(meta["termination_reason"]),
        f"{users} user message{'' if users == 1 else 's'}",
        str(len(session.trajectory.steps)),
        _verdict(session),
        f"{session.duration_s:.1f}s",
    )


def _verdict(session: SessionResult) -> str:
    """PASS, FAIL naming what failed, or "failed run" (left out of the pass rate)."""
    if session.verification is None:
        return "failed run"
    if session.verification.passed:
        return "PASS"
    failing = [r.name or r.type for r in session.verification.results if not r.passed]
    return f"FAIL ({', '.join(failing)})" if failing else "FAIL (no verifiers)"


def _check_same_agent(out: Path, agent: str, resume_cmd: str | None, resume: bool) -> None:
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
