"""`agentlens demo`: the guided tour of `agentlens.demo` on real data."""

from __future__ import annotations

from pathlib import Path

import click

from agentlens.cli._app import console
from agentlens.cli._sandbox_option import sandbox_option
from agentlens.demo.tour import SECTIONS, find_data, run_demo


@click.command()
@sandbox_option
@click.option(
    "--data",
    "data",
    type=click.Path(exists=True, file_okay=False),
    default=None,
    help="AgentLens-Bench traces to read (default: ../shared/data/agentlens-bench-dev, else the "
    "public release, downloaded once and checked against a pinned SHA-256).",
)
@click.option(
    "--section",
    "only",
    multiple=True,
    type=click.Choice(list(SECTIONS)),
    help="Run only these sections (repeatable).",
)
@click.option(
    "--llm",
    is_flag=True,
    help="Also run the LLM parts (judge reviews, step value, a scenario run) on the local model "
    "(needs agentlens[local-llm]).",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    default=None,
    help="Where the results store and HTML report go (default: demo/ in the AgentLens cache).",
)
def demo(data: str | None, only: tuple[str, ...], llm: bool, out: str | None) -> int:
    """Run the main job on real data and print what it found.

    Reads the AgentLens-Bench dev traces (or the release), labels, scores and reviews them."""
    data_dir = Path(data) if data else find_data(console)
    return run_demo(data_dir, console, only, llm=llm, out=out)
