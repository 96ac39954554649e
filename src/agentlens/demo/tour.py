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
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, TransferSpeedColumn
from rich.text import Text

from agentlens.cli._app import internal_error, progress_bar
from agentlens.cli._inputs import load_inputs
from agentlens.demo.context import DemoContext
from agentlens.errors import AgentLensError, debug
from agentlens.release import AGENTLENS_BENCH, ensure_release
from agentlens.verification.isolation import SandboxUnavailableError

SECTIONS: dict[str, str] = {
    "ingest": "agentlens.demo.reading:ingest_section",
    "outcomes": "agentlens.demo.reading:outcomes_section",
    "steps by category": "agentlens.demo.reading:categories_section",
    "tokens": "agentlens.demo.reading:tokens_section",
    "intent labels": "agentlens.demo.process_scores:labels_section",
    "process scoring": "agentlens.demo.process_scores:process_section",
    "results store": "agentlens.demo.results_store:store_section",
    "step value": "agentlens.demo.step_value:demo_section",
    "trajectory reviews": "agentlens.demo.reviews:demo_section",
    "scenario run": "agentlens.demo.scenario_run:demo_section",
}
DEV_DATA = Path("..") / "shared" / "data" / "agentlens-bench-dev"
REPO = Path(__file__).resolve().parents[3]


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
        except SandboxUnavailableError as exc:  # the machine, not the section: say so and go on
            console.print(f"{name}: skipped ({exc})", highlight=False, markup=False)
        except Exception as exc:  # one broken section must not hide the others
            if debug():
                raise
            failed += 1
            console.print(Text.assemble((f"section {name!r} failed:", "red"), f" {_why(exc)}"))
    return 1 if failed or result.failures else 0


def _why(exc: Exception) -> str:
    """A user-facing error says only its message (a class name means nothing to a user); anything
    else is a bug of ours, said as the CLI says one."""
    return str(exc) if isinstance(exc, AgentLensError) else internal_error(exc)


def find_data(console: Console) -> Path:
    """The dev data next to the working directory or the repository, else the cached release."""
    for candidate in (Path.cwd() / DEV_DATA, REPO / DEV_DATA):
        if (candidate / "trajectories").is_dir():
            return candidate.resolve()
    console.print(f"no local data; fetching the AgentLens-Bench release from {AGENTLENS_BENCH.url}")
    columns = (BarColumn(), DownloadColumn(), TransferSpeedColumn())
    with progress_bar(*columns, console=console) as bar:
        task = bar.add_task("download", total=None)
        return ensure_release(
            AGENTLENS_BENCH,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
        )


def _load(target: str) -> Callable[[DemoContext], None]:
    module, _, attr = target.partition(":")
    function: Callable[[DemoContext], None] = getattr(importlib.import_module(module), attr)
    return function
