"""`agentlens demo`: run the main job on real data and print what it found, section by section.

Data: `--data DIR`, else `../shared/data/agentlens-bench-dev` relative to the working directory or
to the repository, else the public AgentLens-Bench release downloaded once into the user cache.

Sections run in the order of `SECTIONS` (name -> "module:function"); each function takes a
`DemoContext` and prints to `ctx.console`. To add a section, add ONE line to `SECTIONS`; the
function is imported only when the demo runs, and a failing section is reported, not fatal.
"""

from __future__ import annotations

import importlib
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TransferSpeedColumn
from rich.table import Table
from rich.text import Text

from agentlens.cli._app import console as default_console
from agentlens.cli._inputs import failure_line, load_inputs
from agentlens.cli._sandbox_option import sandbox_option
from agentlens.formats.load import ReadResult
from agentlens.trajectory import Trajectory

SECTIONS: dict[str, str] = {
    "ingest": "agentlens.cli.demo_cmd:ingest_section",
    "outcomes": "agentlens.cli.demo_cmd:outcomes_section",
    "steps by category": "agentlens.cli.demo_cmd:categories_section",
    "tokens": "agentlens.cli.demo_cmd:tokens_section",
    "intent labels": "agentlens.cli._demo_process:labels_section",
    "process scoring": "agentlens.cli._demo_process:process_section",
    "results store": "agentlens.cli._demo_store:store_section",
    "step value": "agentlens.stepvalue.demo:demo_section",
    "trajectory reviews": "agentlens.reviews.demo:demo_section",
    "scenario run": "agentlens.scenarios.demo:demo_section",
}
DEV_DATA = Path("..") / "shared" / "data" / "agentlens-bench-dev"
REPO = Path(__file__).resolve().parents[3]


@dataclass
class DemoContext:
    """What every section sees: the data folder, what was read, and where to print."""

    data_dir: Path
    console: Console
    result: ReadResult
    seconds: float
    extras: dict[str, Any] = field(default_factory=dict)
    """Scratch space so a later section can reuse what an earlier one computed."""

    @property
    def trajectories(self) -> list[Trajectory]:
        return self.result.trajectories


@click.command()
@click.option("--data", "data", type=click.Path(exists=True, file_okay=False), default=None)
@click.option("--section", "only", multiple=True, help="Run only these sections (repeatable).")
@click.option(
    "--llm",
    is_flag=True,
    help="Also run the LLM parts (judge reviews, step value) on the local model "
    "(needs agentlens[local-llm]).",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    default=None,
    help="Where the results store and HTML report go (default: demo/ in the AgentLens cache).",
)
@sandbox_option
def demo(data: str | None, only: tuple[str, ...], llm: bool, out: str | None) -> int:
    """Read the AgentLens-Bench dev traces (or the release), label, score and review them."""
    data_dir = Path(data) if data else find_data(default_console)
    return run_demo(data_dir, default_console, only, llm=llm, out=out)


def run_demo(
    data_dir: Path,
    console: Console,
    only: tuple[str, ...] = (),
    *,
    llm: bool = False,
    out: str | None = None,
) -> int:
    """Read every trace under `data_dir`, then run each section; returns the exit code."""
    trajectories_dir = data_dir / "trajectories"
    root = trajectories_dir if trajectories_dir.is_dir() else data_dir
    console.rule(f"AgentLens demo: {data_dir}")
    started = time.perf_counter()
    result = load_inputs([str(root)])
    ctx = DemoContext(data_dir, console, result, time.perf_counter() - started)
    ctx.extras["llm"] = llm
    ctx.extras["out"] = out
    failed = 0
    for name, target in SECTIONS.items():
        if only and name not in only:
            continue
        console.rule(name)
        try:
            _load(target)(ctx)
        except Exception as exc:  # one broken section must not hide the others
            failed += 1
            console.print(
                Text.assemble((f"section {name!r} failed:", "red"), f" {type(exc).__name__}: {exc}")
            )
    return 1 if failed or result.failures else 0


def find_data(console: Console) -> Path:
    """The dev data next to the working directory or the repository, else the cached release."""
    for candidate in (Path.cwd() / DEV_DATA, REPO / DEV_DATA):
        if (candidate / "trajectories").is_dir():
            return candidate.resolve()
    from agentlens.release import AGENTLENS_BENCH, ensure_release

    console.print(f"no local data; fetching the AgentLens-Bench release from {AGENTLENS_BENCH.url}")
    columns = (BarColumn(), DownloadColumn(), TransferSpeedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("download", total=None)
        return ensure_release(
            AGENTLENS_BENCH,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
        )


def _load(target: str) -> Callable[[DemoContext], None]:
    module, _, attr = target.partition(":")
    function: Callable[[DemoContext], None] = getattr(importlib.import_module(module), attr)
    return function


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
        f"read {len(files)} files, {len(ctx.trajectories)} trajectories in {ctx.seconds:.2f} s; "
        f"{len(ctx.result.failures)} failed, {len(ctx.result.skipped)} skipped",
        highlight=False,
    )
    for failure in ctx.result.failures:
        ctx.console.print(
            Text.assemble(("failed:", "red"), f" {failure_line(failure)}"), soft_wrap=True
        )


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
        usages = [t.usage_total() for t in group]
        total = sum(u.total_tokens for u in usages)
        table.add_row(
            status,
            str(len(group)),
            f"{sum(u.prompt_tokens for u in usages):,}",
            f"{sum(u.completion_tokens for u in usages):,}",
            f"{sum(u.cached_tokens for u in usages):,}",
            f"{total / len(group):,.0f}",
        )
    ctx.console.print(table)
