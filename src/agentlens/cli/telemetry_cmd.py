"""`agentlens telemetry PATH…`: time, cost, tokens, throughput, tool calls and success rates."""

from __future__ import annotations

from typing import Any

import click
from rich.console import Group
from rich.table import Table
from rich.text import Text

from agentlens.cli._app import console
from agentlens.cli._inputs import report_failures, stream_inputs
from agentlens.jsonio import dump
from agentlens.list_text import counted
from agentlens.reviews.telemetry import TelemetryTotals, trajectory_telemetry

QUANTILES = ("total", "q10", "q50", "q80", "q100")


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="The report fields as one JSON object.")
def telemetry(paths: tuple[str, ...], as_json: bool) -> int:
    """Tokens, time, price and tool success of each run. Tool success rates are listed worst first."""
    stream = stream_inputs(paths)
    totals = TelemetryTotals()
    for trajectory in stream:
        totals.add(trajectory_telemetry(trajectory))
    doc = totals.to_dict()
    if as_json:
        console.print_json(dump(doc))
    elif doc["trajectories"] or not stream.failures:  # every file failed: their lines say it all
        console.print(report(doc))
    return report_failures(stream)


def report(doc: dict[str, Any]) -> Group:
    """The `--json` fields laid out for reading: who ran, time and price quantiles, tokens, tool
    calls, per-tool success worst first, how the runs ended."""
    meta = doc["run_metadata"]
    lines = [
        Text(counted(doc["trajectories"], "trajectory"), style="bold"),
        Text(f"  models: {tally(meta['models'])}"),
        Text(f"  agents: {tally(meta['agents'])}"),
        Text(f"  formats: {tally(meta['formats'])}"),
        Text(f"  ended: {tally(doc['termination_reason'])}"),
        Text(tokens_line(doc)),
        Text(tools_line(doc)),
    ]
    if cached := doc.get("responses_from_cache"):
        lines.append(
            Text(
                f"  {cached} model replies served from the response cache: their responses and "
                "trajectories have no time (left out of the time figures)"
            )
        )
    return Group(*lines, quantile_table(doc), success_table(doc["tool_call_success_rates"]))


def tally(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} ×{count}" for name, count in counts.items()) or "-"


def tokens_line(doc: dict[str, Any]) -> str:
    ratio, rate = doc["cache_hit_ratio"], doc["gen_tokens_to_seconds_ratio"]
    if not doc["prompt_tokens"] and not doc["completion_tokens"]:
        return "tokens: none recorded per step in these traces"
    line = f"tokens: {doc['prompt_tokens']:,} prompt ({doc['cached_tokens']:,} cached"
    line += f", hit ratio {ratio})" if ratio is not None else ")"
    line += f", {doc['completion_tokens']:,} generated"
    return line + (f" ({rate} per second of agent time)" if rate is not None else "")


def tools_line(doc: dict[str, Any]) -> str:
    line = f"tool calls: {doc['tools_calls_total']:,}"
    if doc["tools_calls_per_chat_mean"] is not None:
        line += f", {doc['tools_calls_per_chat_mean']} per trajectory"
    if doc["tool_calls_in_parallel_mean"] is not None:
        line += f", {doc['tool_calls_in_parallel_mean']} per tool-calling response"
    inferred = doc["tool_success_inferred_from_output"]
    return line + (
        f"; success of {counted(inferred, 'call')} inferred from the output" if inferred else ""
    )


def quantile_table(doc: dict[str, Any]) -> Table:
    table = Table(title="agent time (s) and price ($)", title_justify="left")
    table.add_column("")
    for name in QUANTILES:
        table.add_column(name, justify="right")
    for label, key in (("time", "agent_time_s"), ("price", "agent_price")):
        for level in ("chat", "response"):
            values = doc[key][level]
            cells = [f"{values[q]:g}" for q in QUANTILES] if values else ["-"] * len(QUANTILES)
            table.add_row(f"{label} per {level}", *cells)
    return table


def success_table(rates: dict[str, str]) -> Table:
    # the spec's order: a smoothed failure rate, so one failure in 2 calls ranks above 8 in 49
    table = Table(
        title="tool success, worst first by (failed + 1) / (calls + 2)", title_justify="left"
    )
    table.add_column("tool")
    table.add_column("ok/calls", justify="right")
    table.add_column("ok %", justify="right")
    for tool, fraction in rates.items():
        ok, total = map(int, fraction.split("/"))
        table.add_row(Text(tool), fraction, f"{100 * ok / total:.0f}" if total else "-")
    return table
