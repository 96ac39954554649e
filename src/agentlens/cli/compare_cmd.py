"""`agentlens compare RUN_A RUN_B`: regression tests of a new run (B) against an anchor (A).
Exit code 0 ok, 1 warning, 2 alert, so CI can gate a release on it."""

from __future__ import annotations

import click

from agentlens.cli._app import console


@click.command()
@click.argument("run_a")
@click.argument("run_b")
@click.option(
    "--a-verify",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="`agentlens verify --out` files of run A.",
)
@click.option(
    "--b-verify", multiple=True, type=click.Path(exists=True, dir_okay=False), help="… of run B."
)
@click.option(
    "--a-reviews",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="`agentlens review --out` of run A (for the QI delta).",
)
@click.option("--b-reviews", type=click.Path(exists=True, dir_okay=False), default=None)
@click.option(
    "--sxs",
    "sxs_path",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="`agentlens sxs --out` of A vs B.",
)
@click.option(
    "--process",
    "with_process",
    is_flag=True,
    help="Also compare process metrics (Lucky rate, V coverage, waste).",
)
@click.option("--json", "as_json", is_flag=True)
@click.option(
    "--md",
    "md_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write a Markdown report here.",
)
def compare(
    run_a: str,
    run_b: str,
    a_verify: tuple[str, ...],
    b_verify: tuple[str, ...],
    a_reviews: str | None,
    b_reviews: str | None,
    sxs_path: str | None,
    with_process: bool,
    as_json: bool,
    md_path: str | None,
) -> int:
    """Mann–Whitney / Fisher tests and ratio thresholds (spec §11.2), SxS flags, QI and process deltas."""
    from pathlib import Path

    from agentlens.cli._inputs import load_inputs
    from agentlens.reviews.compare import RunSummary, compare_runs
    from agentlens.reviews.report import SXS_KIND, compare_markdown, dump, formal_results, load
    from agentlens.reviews.telemetry import RunTelemetry

    summaries = []
    process_refs = None
    for name, verify, reviews in ((run_a, a_verify, a_reviews), (run_b, b_verify, b_reviews)):
        trajs = load_inputs([name]).trajectories
        summary = RunSummary(name, RunTelemetry.of(trajs))
        summary.formal = formal_results(verify) if verify else None
        summary.qi = _qi(reviews, summary.formal) if reviews else None
        if with_process:
            from agentlens.reviews.process_evidence import (
                metrics,
                references_from_passing,
                score_all,
            )

            process_refs = process_refs or references_from_passing(trajs)
            summary.process = metrics(list(score_all(trajs, process_refs).values()))
        summaries.append(summary)
    if sxs_path:
        summaries[1].sxs_flags = load(sxs_path, SXS_KIND)["dimensions"]
    result = compare_runs(summaries[0], summaries[1])
    doc = result.to_dict()
    if md_path:
        Path(md_path).write_text(compare_markdown(doc))
    if as_json:
        console.print_json(dump(doc))
    else:
        console.print(compare_markdown(doc), markup=False, highlight=False)
    return result.exit_code


def _qi(reviews_path: str, formal: list[int] | None) -> float:
    from agentlens.reviews.judge.judge import aggregate
    from agentlens.reviews.qi import quality_index
    from agentlens.reviews.report import load_reviews

    means = {d: s.mean for d, s in aggregate(load_reviews(reviews_path)).items()}
    return quality_index(sum(formal) / len(formal) if formal else None, means).value
