"""`agentlens stepvalue TRAJ… --candidates … --evaluator MODEL --channels …`."""

from __future__ import annotations

import click

from agentlens.cli._app import console
from agentlens.cli._inputs import load_inputs, report_failures


def _csv(value: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(",") if v.strip())


@click.command()
@click.argument("paths", nargs=-1)
@click.option(
    "--candidates",
    required=True,
    help="fault-localisation, outcome, or an asv.v1 JSONL file (open-QA candidate sets).",
)
@click.option("--evaluator", required=True, help="Model string or role, e.g. llamacpp:/m.gguf.")
@click.option(
    "--channels",
    default="direct,generated-rationale-128,extractive-buffer",
    show_default=True,
    help="Comma list: direct, generated-rationale-128/-512, swapped-rationale-128, "
    "extractive-buffer, candidate-only-rationale.",
)
@click.option(
    "--permutations", "-b", default=4, show_default=True, help="Cyclic label rotations B."
)
@click.option(
    "--slices", default="full", show_default=True, help="full,evidence-only,agent-output-only"
)
@click.option("--out", "outdir", default="stepvalue-out", show_default=True, type=click.Path())
@click.option(
    "--runs", multiple=True, help="Other runs of the task (fault-localisation candidates)."
)
@click.option("--reference", default=None, help="Reference JSON for the gold file, or 'auto'.")
@click.option(
    "--labels", multiple=True, help="Outcome sidecar: results.json, report, CSV, logs dir."
)
@click.option("--max-steps", type=int, default=None, help="Score only the first N steps.")
@click.option("--rationale-tokens", type=int, default=None, help="Override the 128-token length.")
@click.option(
    "--leak-policy", type=click.Choice(["error", "warn"]), default="error", show_default=True
)
@click.option(
    "--concurrency", type=int, default=None, help="States in flight (default 1 local, 4 remote)."
)
@click.option("--audit-n", default=100, show_default=True, help="Transitions per audit sample.")
@click.option("--no-cache", is_flag=True, help="Do not use the LLM response cache.")
def stepvalue(
    paths: tuple[str, ...],
    candidates: str,
    evaluator: str,
    channels: str,
    permutations: int,
    slices: str,
    outdir: str,
    runs: tuple[str, ...],
    reference: str | None,
    labels: tuple[str, ...],
    max_steps: int | None,
    rationale_tokens: int | None,
    leak_policy: str,
    concurrency: int | None,
    audit_n: int,
    no_cache: bool,
) -> int:
    """Per-step value: replay each trajectory through an evaluator LLM that puts a belief on a
    fixed candidate set at every state, and report how each step moved it, per channel.

    Writes summary.json, steps.jsonl, states.jsonl, CSV tables and report.md into --out.
    """
    from agentlens.providers import get_provider
    from agentlens.providers.registry import is_local
    from agentlens.stepvalue.config import RunConfig
    from agentlens.stepvalue.evaluate import evaluate
    from agentlens.stepvalue.report import write_outputs
    from agentlens.stepvalue.sources import build_problems

    config = RunConfig(
        channels=_csv(channels),
        permutations=permutations,
        slices=_csv(slices),  # type: ignore[arg-type]
        rationale_tokens=rationale_tokens,
        leak_policy=leak_policy,  # type: ignore[arg-type]
        concurrency=concurrency or (1 if is_local(evaluator) else 4),
    )
    config.validate()
    loaded = load_inputs(paths, labels=labels) if paths else None
    pool = load_inputs(runs, labels=labels).trajectories if runs else []
    problems = build_problems(
        loaded.trajectories if loaded else [],
        candidates,
        runs=pool,
        max_steps=max_steps,
        reference=reference,
    )
    client = get_provider(evaluator, role="evaluator", cache=not no_cache)
    result = evaluate(problems, client, config, audit_n=audit_n)
    paths_out = write_outputs(result, outdir)
    c = result.costs
    console.print(
        f"{len(problems)} trajectories, {c.transitions} transitions, {c.distinct_states} states: "
        f"{c.evaluator_calls} evaluator calls (naive {c.naive_calls}), {c.wall_s:.1f} s",
        highlight=False,
    )
    console.print(f"report: {paths_out['report']}", highlight=False)
    return report_failures(loaded) if loaded else 0
