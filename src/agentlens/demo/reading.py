"""The demo's reading sections: what was read (formats, files, failures), the outcomes and their
label source, tool calls by category, and tokens by outcome."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from rich.table import Table
from rich.text import Text

from agentlens import redaction
from agentlens.cli._inputs import failure_line
from agentlens.demo.context import DemoContext
from agentlens.list_text import counted
from agentlens.trajectory import Trajectory


def ingest_section(ctx: DemoContext) -> None:
    files = Counter(Path(t.source.path) for t in ctx.trajectories)
    table = Table("format", "files", "trajectories", "steps", "tool calls")
    by_format: dict[str, list[Trajectory]] = {}
    for traj in ctx.trajectories:
        by_format.setdefault(traj.source.format, []).append(traj)
    for fmt, group in sorted(by_format.items()):
        table.add_row(
            fmt,
            str(len({t.source.path for t in group})),
            str(len(group)),
            f"{sum(len(t.steps) for t in group):,}",
            f"{sum(len(t.tool_steps) for t in group):,}",
        )
    ctx.console.print(table)
    ctx.console.print(
        f"read {counted(len(files), 'file')}, {counted(len(ctx.trajectories), 'trajectory')} "
        f"in {ctx.seconds:.2f} s; "
        f"{len(ctx.result.failures)} failed, {len(ctx.result.skipped)} skipped",
        highlight=False,
    )
    for failure in ctx.result.failures:
        line = redaction.redact_text(failure_line(failure))  # a file may be named by a key
        ctx.console.print(Text.assemble(("failed:", "red"), f" {line}"), soft_wrap=True)


def outcomes_section(ctx: DemoContext) -> None:
    counts = Counter((t.outcome.status, t.outcome.source or "-") for t in ctx.trajectories)
    table = Table("outcome", "label source", "trajectories")
    for (status, source), n in sorted(counts.items()):
        table.add_row(status, source, str(n))
    ctx.console.print(table)


def categories_section(ctx: DemoContext) -> None:
    totals: Counter[str] = Counter()
    for traj in ctx.trajectories:
        totals.update(traj.category_counts())
    all_calls = sum(totals.values()) or 1
    table = Table("category", "tool calls", "share", "per trajectory")
    per = max(len(ctx.trajectories), 1)
    for category, n in totals.most_common():
        table.add_row(category, f"{n:,}", f"{n / all_calls:.1%}", f"{n / per:.1f}")
    ctx.console.print(table)


def tokens_section(ctx: DemoContext) -> None:
    table = Table("outcome", "trajectories", "prompt", "completion", "cached", "mean total")
    for status in ("passed", "failed", "unknown"):
        group = [t for t in ctx.trajectories if t.outcome.status == status]
        if not group:
            continue
        # per-step sums, else the file's totals (SWE-agent's `model_stats`); unknown is not 0
        usages = [u for u in (t.usage_known() for t in group) if u is not None]
        if not usages:
            table.add_row(status, str(len(group)), "-", "-", "-", "-")
            continue
        total = sum(u.total_tokens for u in usages)
        counted = "" if len(usages) == len(group) else f" ({len(usages)} with tokens)"
        table.add_row(
            status,
            f"{len(group)}{counted}",
            f"{sum(u.prompt_tokens for u in usages):,}",
            f"{sum(u.completion_tokens for u in usages):,}",
            f"{sum(u.cached_tokens for u in usages):,}",
            f"{total / len(usages):,.0f}",
        )
    ctx.console.print(table)
