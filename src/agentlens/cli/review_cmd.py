"""`agentlens review PATH… --judge MODEL`: LLM-judge reviews of trajectories on a metric set's
dimensions (`workflows`, the five; `testing`, nine; `auto`, the default: each trajectory's by its
scenario's tags)."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.progress import Progress
from rich.text import Text

from agentlens.cli._app import console, err_console
from agentlens.cli._dimension_options import (
    check_auto_request,
    chosen_dimensions,
    dimension_options,
)
from agentlens.cli._inputs import load_inputs, report_failures
from agentlens.cli._sandbox_option import sandbox_option
from agentlens.cli._store_option import label_option, save_run, store_option
from agentlens.reviews.auto_metric_set import AUTO

T = TypeVar("T")

if TYPE_CHECKING:
    from agentlens.reviews.judge.judge import TrajectoryReview
    from agentlens.reviews.judge.prompt import ReviewContext
    from agentlens.reviews.process_evidence import ProcessScores
    from agentlens.trajectory import Trajectory


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--judge", "judge_model", default="judge", show_default=True, help="Model string or role name."
)
@dimension_options
@click.option(
    "--budget-tokens",
    default=6000,
    show_default=True,
    type=click.IntRange(min=200),
    help="Transcript token budget per prompt (≤ 2000 for 4k-context local models).",
)
@click.option(
    "--max-tokens",
    default=700,
    show_default=True,
    type=click.IntRange(min=1),
    help="Judge answer limit.",
)
@click.option(
    "--repo",
    type=click.Path(exists=True, file_okay=False),
    default=None,
    help="Final repository: its git diff goes into the prompt.",
)
@click.option(
    "--base", "base_ref", default="HEAD", show_default=True, help="Base revision for --repo's diff."
)
@click.option(
    "--process", "with_process", is_flag=True, help="Add process evidence (issue 3) to the prompt."
)
@click.option(
    "--summary",
    "with_summary",
    is_flag=True,
    help="Per dimension, an LLM summary regrouping the reviews' evidence into aspect groups "
    "that cite the reviews as R<k>, linked to their trajectories (spec §5.5).",
)
@click.option("--no-cache", is_flag=True, help="Do not reuse cached judge answers.")
@click.option("--json", "as_json", is_flag=True, help="Print the reviews as JSON.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write the reviews JSON here (input of qi/sxs/compare).",
)
@store_option
@label_option
@sandbox_option
def review(
    paths: tuple[str, ...],
    judge_model: str,
    metric_set: str,
    dimensions: tuple[str, ...],
    budget_tokens: int,
    max_tokens: int,
    repo: str | None,
    base_ref: str,
    with_process: bool,
    with_summary: bool,
    no_cache: bool,
    as_json: bool,
    out: str | None,
    store_url: str | None,
    run_label: str | None,
) -> int:
    """Score each trajectory 0 / 0.5 / 1 per dimension; unparseable answers are unscored, never 0."""
    from agentlens.providers import get_provider
    from agentlens.reviews.judge.judge import MAX_REVIEWED, JudgeSettings, review_run
    from agentlens.reviews.report import (
        dump,
        reviewed_dimensions,
        reviews_document,
        reviews_markdown,
    )

    explicit = None if metric_set == AUTO else chosen_dimensions(metric_set, dimensions)
    loaded = load_inputs(paths)
    trajs = loaded.trajectories
    judged_on, pool = (explicit, trajs) if explicit else _auto_dimensions(dimensions, trajs)
    client = get_provider(judge_model, role="judge", cache=not no_cache)
    diff = _diff(repo, base_ref) if repo else None
    contexts = {t.id: _context(t, diff) for t in trajs}
    if with_process:
        _add_process_evidence(trajs, contexts, pool=pool)
    settings = JudgeSettings(budget_tokens=budget_tokens, max_tokens=max_tokens)
    with Progress(console=err_console, transient=True) as progress:
        task = progress.add_task("reviewing", total=min(len(pool), MAX_REVIEWED))
        reviews = client.run(
            review_run(
                client,
                pool,
                dimensions=judged_on,
                contexts=contexts,
                settings=settings,
                on_done=lambda _: progress.advance(task),
            )
        )
    doc = reviews_document(client.name, reviews)
    if with_summary:
        from agentlens.reviews.judge.summary import summarize

        dims = reviewed_dimensions(reviews)
        narratives = client.run(_gather(*(summarize(client, d, reviews) for d in dims)))
        doc["narratives"] = {n.dimension: n.to_dict() for n in narratives}
    if out:
        dump(doc, out)
    if store_url:
        judged = explicit or reviewed_dimensions(reviews)
        _store(store_url, run_label, client.name, metric_set, judged, trajs, reviews, doc)
    if as_json:
        console.print_json(dump(doc))
    else:
        # soft_wrap: Markdown must not be folded at the terminal's width (headings would break)
        console.print(reviews_markdown(doc), markup=False, highlight=False, soft_wrap=True)
    return max(report_failures(loaded), _report_call_failures(reviews))


def _store(
    url: str, label: str | None, judge: str, metric_set: str, dimensions: Sequence[str],
    trajs: list[Trajectory], reviews: list[TrajectoryReview], doc: dict[str, Any],
) -> None:  # fmt: skip
    from agentlens.store import Run
    from agentlens.store.records import review_records

    by_id = {t.id: t for t in trajs}
    run = Run(
        kind="review",
        scorer=f"judge/{judge}",
        label=label,
        settings={"metric_set": metric_set, "dimensions": list(dimensions)},
        summary={k: v for k, v in doc.items() if k != "trajectories"},
    )
    pairs = [(by_id[r.trajectory_id], r) for r in reviews]
    save_run(url, run, [t for t, _ in pairs], review_records(pairs))


def _auto_dimensions(
    only: tuple[str, ...], trajs: list[Trajectory]
) -> tuple[Callable[[Trajectory], tuple[str, ...]], list[Trajectory]]:
    """`--metric-set auto`: each trajectory's own dimensions, and the trajectories that have any
    left to judge (`--dimension` may narrow an untagged one's to none)."""
    from agentlens.reviews.auto_metric_set import tagged_testing, trajectory_dimensions

    check_auto_request(only, trajs)
    dims_of = trajectory_dimensions(only)
    pool = [t for t in trajs if dims_of(t)]
    tagged = sum(map(tagged_testing, trajs))
    if tagged:
        err_console.print(
            f"metric set auto: {tagged} of {len(trajs)} trajectories tagged testing, judged on "
            "the testing set; the others on workflows",
            highlight=False,
        )
    if len(pool) < len(trajs):
        err_console.print(
            f"metric set auto: {len(trajs) - len(pool)} trajectories not tagged testing have "
            "none of the --dimension asked; not reviewed",
            highlight=False,
        )
    return dims_of, pool


def _report_call_failures(reviews: list[TrajectoryReview]) -> int:
    """One line when judge calls failed outright (after retries); exit 1, like unreadable files."""
    failed = [r for t in reviews for r in t.reviews.values() if r.provider_failed]
    if not failed:
        return 0
    calls = sum(len(t.reviews) for t in reviews)
    err_console.print(
        Text.assemble(
            ("failed:", "red"),
            f" {len(failed)} of {calls} judge calls; first: {failed[0].unscored_reason}",
        ),
        soft_wrap=True,
    )
    return 1


def _context(traj: Trajectory, diff: str | None) -> ReviewContext:
    """`--repo`'s diff when given; a scenario run brings its own workspace diff and verdicts."""
    from agentlens.reviews.judge.prompt import ReviewContext
    from agentlens.scenarios.evidence import scenario_context

    own = scenario_context(traj)
    if own is None:
        return ReviewContext(final_diff=diff)
    if diff is not None:
        own.final_diff = diff
    return own


async def _gather(*jobs: Awaitable[T]) -> list[T]:
    return list(await asyncio.gather(*jobs))


def _diff(repo: str, base_ref: str) -> str:
    proc = subprocess.run(
        ["git", "-C", repo, "diff", base_ref], capture_output=True, text=True, check=False
    )
    return proc.stdout


def _add_process_evidence(
    trajs: list[Trajectory],
    contexts: dict[str, ReviewContext],
    *,
    pool: list[Trajectory] | None = None,
) -> ProcessScores:
    """Process evidence for the trajectories that will be reviewed (at most `MAX_REVIEWED` of
    `pool`, all given by default), scored leave-one-out against references from all passing
    runs given."""
    from agentlens.reviews.judge.judge import select_for_review
    from agentlens.reviews.process_evidence import evidence_text, leave_one_out_scores, run_key

    reviewed = select_for_review(trajs if pool is None else pool)
    scores = leave_one_out_scores(trajs, only=reviewed)
    for traj in reviewed:
        contexts[traj.id].process_evidence = evidence_text(traj, scores.results.get(run_key(traj)))
    unscored = scores.unscored(reviewed)
    if unscored:
        err_console.print(
            f"process evidence: {len(reviewed) - len(unscored)} of {len(reviewed)} reviewed runs "
            f"scored ({scores.method}); {len(unscored)} get the stage timeline only",
            highlight=False,
        )
    return scores
