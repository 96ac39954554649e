"""`agentlens telemetry PATH…`: time, cost, tokens, throughput, tool calls and success rates."""

from __future__ import annotations

import click

from agentlens.cli._app import console
from agentlens.cli._inputs import load_inputs, report_failures


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True)
def telemetry(paths: tuple[str, ...], as_json: bool) -> int:
    """Per-run telemetry; per-tool success rates are listed worst first."""
    from agentlens.reviews.report import dump
    from agentlens.reviews.telemetry import RunTelemetry

    loaded = load_inputs(paths)
    doc = RunTelemetry.of(loaded.trajectories).to_dict()
    if as_json:
        console.print_json(dump(doc))
    else:
        for key, value in doc.items():
            console.print(f"{key:36} {value}", highlight=False, markup=False)
    return report_failures(loaded)
