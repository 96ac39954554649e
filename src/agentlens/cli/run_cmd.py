"""`agentlens run SCENARIO… --agent SPEC --out DIR`: scenario runs with a simulated user."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from agentlens.cli._app import WIDE, console, err_console, progress_bar, say, stop_said
from agentlens.cli._sandbox_option import sandbox_option
from agentlens.cli._store_option import label_option, save_run, store_option
from agentlens.list_text import counted
from agentlens.scenarios import Fold, FoldResult, RunSettings, SessionResult, run_fold
from agentlens.scenarios.records import scenario_records, scenario_run
from agentlens.scenarios.run_plan import RunRequest, plan_fold, run_settings
from agentlens.scenarios.stop_signals import run_stoppable
from agentlens.stop_signals import StopSignalExit


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
@click.option(
    "--dump-prompts",
    "dump_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Write the first prompt of each model call the run would open (redacted) to "
    "DIR/<scenario>_<persona>/<who>-first.json and exit without running anything.",
)
@store_option
@label_option
@sandbox_option
def run(
    scenarios: tuple[str, ...],
    as_json: bool,
    dump_dir: str | None,
    store_url: str | None,
    run_label: str | None,
    **options: Any,
) -> int:
    """Run an agent on scenarios, driven by a simulated user.

    Each scenario × persona: the agent works in a copy of the project while a simulated
    user drives the dialog; each run is formally verified. Exit 1 if a run failed or was skipped."""
    request = RunRequest(**options)
    fold = plan_fold(scenarios, request, say=lambda line: err_console.print(Text(line)))
    if dump_dir:
        return _dump(fold, request, dump_dir)
    with run_settings(request) as settings:
        result = _run_with_progress(fold, settings, request.out)
    if store_url:
        run = scenario_run(
            result, run_label or settings.out.name, request.agent_spec, request.simulator
        )
        save_run(
            store_url,
            run,
            [s.trajectory for s in result.sessions],
            scenario_records(result.sessions),
        )
    if as_json:
        console.print_json(json.dumps(result.summary()))
    else:
        _print(result, settings.out)
    return 0 if result.complete else 1


def _dump(fold: Fold, request: RunRequest, dump_dir: str) -> int:
    from agentlens.scenarios.dump import write_first_prompts
    from agentlens.scenarios.simulated_user import SimulatorSettings

    settings = SimulatorSettings(context_chars=request.simulator_context_chars)
    written = write_first_prompts(
        fold, request.agent_spec, request.simulator, Path(request.out), settings, dump_dir
    )
    console.print(f"wrote {counted(len(written), 'prompt')} under {dump_dir}", highlight=False)
    return 0


def _run_with_progress(fold: Fold, settings: RunSettings, out: str) -> FoldResult:
    """A line per pair as it ends (runs take minutes); SIGTERM/SIGHUP cancel the run like
    Ctrl-C, and cancelling kills the agents' processes."""
    pairs = len(fold.scenarios) * len(fold.personas)
    finished: list[SessionResult] = []

    def done(session: SessionResult) -> None:
        finished.append(session)
        progress.advance(task)
        progress.console.print(_pair_line(_row(session)))

    with progress_bar() as progress:
        task = progress.add_task("scenario runs", total=pairs)
        try:
            return run_stoppable(run_fold(fold, settings, on_session=done))
        except (KeyboardInterrupt, StopSignalExit) as exc:  # Ctrl-C; SIGTERM or SIGHUP
            err_console.print(
                Text(
                    f"stopped: {len(finished)} of {counted(pairs, 'pair')} finished and kept in {out}; "
                    "the same command with --resume runs the rest"
                )
            )
            raise stop_said(exc) from None


def _print(result: FoldResult, out: Path) -> None:
    rows = [_row(session) for session in result.sessions]
    if console.width >= WIDE:
        table = Table("scenario / persona", "ended", "user", "steps", "formal", "time")
        for row in rows:
            table.add_row(*row[:1], Text(row[1]), *row[2:])
        console.print(table)
    else:  # a table of six columns folds every cell below WIDE: a block per run reads better
        for row in rows:
            _print_pair(row)
    summary = result.summary()
    rate = summary["formal_pass_rate"]
    judged = summary["runs"] - summary["failed_runs"]
    _line(
        f"formal pass rate {'-' if rate is None else f'{rate:.1%}'} "
        f"({summary['formal_passed']}/{judged}; failed runs left out: {summary['failed_runs']}) · "
        f"simulator spend ${summary['simulator_spend_dollars']:.4f}"
    )
    if summary["resumed"]:
        _line(f"resumed: {counted(summary['resumed'], 'pair')} kept from the earlier run in {out}")
    for pair in summary["skipped_over_budget"]:
        say("skipped", f"{pair} (budget spent)")
    _line(f"trajectories: {out / 'trajectories'} (agentlens review / telemetry / qi)")
    if summary["failed_runs"]:
        _line(f"failed runs (left out): {out / 'failed'}")


def _line(text: str) -> None:
    """One line as it is: a narrow terminal wraps it, but no newline is put into a path that
    is there to be copied."""
    console.print(Text(text))


def _print_pair(row: tuple[str, str, str, str, str, str]) -> None:
    """A pair as three lines (its name, then the verdict, then why it ended), for terminals too
    narrow for the table: each line whole, so a name or a verdict is never split mid-word."""
    name, ended, users, steps, verdict, seconds = row
    _line(f"{name}  {users}, {_steps(steps)}, {seconds}")
    _line(f"  {verdict}")
    _line(f"  ended: {ended}")


def _steps(count: str) -> str:
    return f"{count} step{'' if count == '1' else 's'}"


def _pair_line(row: tuple[str, str, str, str, str, str]) -> Text:
    name, _, users, steps, verdict, seconds = row
    return Text(f"{name}  {verdict}  ({users}, {_steps(steps)}, {seconds})")


def _row(session: SessionResult) -> tuple[str, str, str, str, str, str]:
    meta = session.trajectory.metadata
    users = int(meta["user_messages"])
    return (
        f"{meta['scenario']} / {meta.get('persona')}",
        str(meta["termination_reason"]),
        counted(users, "user message"),
        str(len(session.trajectory.steps)),
        session.verdict,
        f"{session.duration_s:.1f}s",
    )
