"""`agentlens verify SCENARIO --repo PATH`: run a scenario's formal verifiers on a repository."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.table import Table
from rich.text import Text

from agentlens.cli._app import WIDE, console, progress_bar
from agentlens.cli._sandbox_option import sandbox_option
from agentlens.formats.load import read_path
from agentlens.jsonio import dump
from agentlens.scenarios.scenario import load_scenario, run_scenario
from agentlens.verification import VERIFY_KIND

if TYPE_CHECKING:
    from agentlens.scenarios.scenario import ScenarioResult


@click.command()
@click.argument("scenario", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--repo",
    type=click.Path(exists=True, file_okay=False),
    required=True,
    help="The repository after the agent's run (a git work tree).",
)
@click.option(
    "--base",
    "base_ref",
    default=None,
    help="Revision the agent started from (default: the scenario's base_ref, else HEAD).",
)
@click.option(
    "--trajectory",
    type=click.Path(exists=True),
    default=None,
    help="Trace file, for chat regex verifiers.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option(
    "--out", type=click.Path(dir_okay=False), default=None, help="Also write the JSON here."
)
@sandbox_option
def verify(
    scenario: str,
    repo: str,
    base_ref: str | None,
    trajectory: str | None,
    as_json: bool,
    out: str | None,
) -> int:
    """Run a scenario's formal checks on a repository.

    It passes only if every verifier passes (errors and timeouts fail). Exit 0 pass,
    1 fail, 4 not scored (a check's tool is not installed and no check failed)."""
    spec = load_scenario(scenario)
    traj = read_path(trajectory)[0] if trajectory else None
    with progress_bar() as progress:
        task = progress.add_task(f"verifying {spec.name}", total=len(spec.verifiers))
        result = run_scenario(
            spec,
            Path(repo),
            trajectory=traj,
            base_ref=base_ref,
            on_result=lambda _: progress.advance(task),
        )
    doc = {
        "kind": VERIFY_KIND,
        "results": [{**result.to_dict(), "repo": repo, "trajectory_id": traj.id if traj else None}],
    }
    if out:
        dump(doc, out)
    if as_json:
        console.print_json(dump(doc))
    else:
        _print(spec.name, result)
    if not result.scored:  # a check could not run and none failed: no verdict, not a failure
        return 4
    return 0 if result.passed else 1


def _print(name: str, result: ScenarioResult) -> None:
    title = f"{name}: {result.verdict} ({result.duration_s:.1f}s)"
    if console.width < WIDE:  # a four-column table folds verifier names mid-word below WIDE
        console.print(Text(title))
        for r in result.results:
            console.print(Text(f"  {r.status:<5} {r.name or r.type}  ({r.duration_s:.2f}s)"))
            console.print(Text(f"        {r.reason}"))
        return
    table = Table(title=Text(title))
    for column in ("verifier", "status", "time", "reason"):
        table.add_column(column, overflow="fold")
    for r in result.results:
        table.add_row(Text(r.name or r.type), r.status, f"{r.duration_s:.2f}s", Text(r.reason))
    console.print(table)
