"""`agentlens reference build RUNS… -o ref.json`: merge passing runs of one task into a reference."""

from __future__ import annotations

import random
from pathlib import Path

import click
import orjson

from agentlens.cli._app import console, err_console, say
from agentlens.cli._inputs import load_inputs, read_options, report_failures
from agentlens.cli._process_options import profile_option
from agentlens.errors import ConfigError
from agentlens.list_text import counted
from agentlens.process.calibrated import saved_baseline
from agentlens.process.profiles import Profile
from agentlens.process.protocols import group_by_task
from agentlens.process.pta_io import reference_to_json
from agentlens.process.reference import build_reference
from agentlens.process.reference_guards import nothing_to_compare
from agentlens.trajectory import Trajectory


@click.group()
def reference() -> None:
    """Build reference graphs from passing runs. Each is a prefix-tree acceptor (PTA) merged
    from passing runs of one task."""


@reference.command("build")
@click.argument("paths", nargs=-1, required=True)
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="ref.json")
@click.option("--k", "k", default=5, show_default=True, type=click.IntRange(min=0),
              help="Donor runs (0 = all passing).")  # fmt: skip
@click.option("--seed", default=42, show_default=True, help="Donor shuffle seed.")
@profile_option
@read_options
def build(
    paths: tuple[str, ...],
    output: str,
    k: int,
    seed: int,
    profile: Profile,
    labels: tuple[str, ...],
    lenient: bool,
    format: str | None,
) -> int:
    """Merge k passing runs of one task into ref.json. The donors are taken in file-name
    order, shuffled with `random.Random(seed)`."""
    result = load_inputs(paths, format=format, lenient=lenient, labels=labels)
    donors = choose_donors(result.trajectories, k, seed)
    ref = build_reference(donors, profile)
    if why := nothing_to_compare(ref):
        raise ConfigError(f"{why}; no reference written")
    doc = reference_to_json(ref)
    if (baseline := saved_baseline(ref)) is not None:
        doc["donor_baseline"] = baseline  # the calibrated profile's f1_rel needs it
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    Path(output).write_bytes(orjson.dumps(doc))
    console.print(
        f"reference for {donors[0].task_id or 'the task'}: {counted(len(ref.nodes), 'state')}, "
        f"{counted(len(ref.edges), 'transition')}, "
        f"{counted(len(ref.branch_points()), 'branch point')}, "
        f"{counted(len(donors), 'donor')} → {output}",
        highlight=False,
    )
    return report_failures(result)


def choose_donors(trajs: list[Trajectory], k: int, seed: int) -> list[Trajectory]:
    """The AgentLens-Bench donor rule for one task: sort by file name, shuffle, take k."""
    groups = group_by_task(trajs)
    if len(groups) > 1:
        raise ConfigError(
            f"runs of {len(groups)} tasks given ({', '.join(sorted(groups)[:3])}…); "
            "a reference is built from one task's runs"
        )
    passing = sorted(
        (t for t in trajs if t.outcome.status == "passed"), key=lambda t: Path(t.source.path).name
    )
    if not passing:
        raise ConfigError("no passing runs among the inputs; pass/fail labels come from the "
                          "file or from --labels")  # fmt: skip
    # Shuffled even when every passing run is a donor: the merge order shapes the reference.
    random.Random(seed).shuffle(passing)
    if k > len(passing):
        err_console.print(f"only {len(passing)} passing runs; using all of them", highlight=False)
    donors = passing[:k] if k > 0 else passing
    if len(donors) < 2:
        say(
            "warning",
            "a reference from one run has no alternative strategies (the paper merges k ≥ 2 "
            "passing runs)",
        )
    return donors
