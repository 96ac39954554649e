"""`agentlens inspect PATH…` and `agentlens formats`."""

from __future__ import annotations

import click
import orjson
from rich.table import Table
from rich.text import Text

from agentlens.cli._app import console
from agentlens.cli._inputs import load_inputs, read_options, report_failures
from agentlens.formats import READERS
from agentlens.trajectory import Trajectory


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="JSON Lines: one summary object per trajectory per line.",
)
@read_options
def inspect(
    paths: tuple[str, ...],
    as_json: bool,
    lenient: bool,
    format: str | None,
    labels: tuple[str, ...],
) -> int:
    """Summarise each trajectory: format, task, model, outcome, steps by category, tokens, cost.

    PATHS may be files, directories (walked; sidecars such as READMEs and logs are skipped) or
    globs. A file that cannot be read gets one line on stderr and the exit code is 1.
    `--json` writes JSON Lines to stdout (one object per trajectory), so it can be piped to `jq`.
    """
    result = load_inputs(paths, lenient=lenient, labels=labels, format=format)
    if as_json:
        for traj in result.trajectories:
            click.echo(orjson.dumps(summary(traj)).decode())
    elif result.trajectories:
        console.print(summary_table(result.trajectories))
    return report_failures(result)


def summary(traj: Trajectory) -> dict[str, object]:
    usage = traj.usage_total()
    return {
        "id": traj.id,
        "format": traj.source.format,
        "path": traj.source.path,
        "task_id": traj.task_id,
        "model": traj.model,
        "outcome": traj.outcome.status,
        "outcome_source": traj.outcome.source,
        "steps": len(traj.steps),
        "tool_calls": len(traj.tool_steps),
        "categories": dict(sorted(traj.category_counts().items())),
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cached_tokens": usage.cached_tokens,
        "cost": traj.cost_total(),
        "subtrajectories": len(traj.subtrajectories),
    }


def summary_table(trajectories: list[Trajectory]) -> Table:
    table = Table(title=f"{len(trajectories)} trajectories")
    for name in (
        "id",
        "format",
        "task",
        "model",
        "outcome",
        "steps",
        "tools by category",
        "tokens in/out",
        "cost",
    ):
        table.add_column(name, overflow="fold")
    for traj in trajectories:
        row = summary(traj)
        cats = " ".join(f"{k}:{v}" for k, v in row["categories"].items())  # type: ignore[attr-defined]
        cost = row["cost"]
        cells = (
            traj.id,
            traj.source.format,
            traj.task_id or "-",
            traj.model or "-",
            traj.outcome.status,
            str(len(traj.steps)),
            cats,
            f"{row['prompt_tokens']:,}/{row['completion_tokens']:,}",
            f"${cost:.3f}" if isinstance(cost, float) else "-",
        )
        table.add_row(*(Text(cell) for cell in cells))
    return table


@click.command()
def formats() -> int:
    """List the trace formats AgentLens reads."""
    for name, target in READERS.items():
        console.print(f"{name:24} {target}", markup=False, highlight=False)
    return 0
