"""`agentlens review PATH… --judge MODEL`: LLM-judge reviews of trajectories on a metric set's
dimensions (`workflows`, the five; `testing`, nine; `auto`, the default: each trajectory's by its
scenario's tags)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.text import Text

from agentlens.cli._app import console, err_console, progress_bar
from agentlens.cli._dimension_options import (
    check_auto_request,
    chosen_dimensions,
    dimension_options,
)
from agentlens.cli._inputs import load_inputs, report_failures
from agentlens.cli._sandbox_option import sandbox_option
from agentlens.cli._store_option import label_option, save_run, store_option
from agentlens.list_text import counted
from agentlens.reviews.auto_metric_set import AUTO

T = TypeVar("T")


def samples_option(what: str) -> Callable[[T], T]:
    """`--samples N` of `review` and `sxs`: `what` it does with the N answers."""
    return click.option(  # type: ignore[return-value]
        "--samples",
        default=1,
        show_default=True,
        type=click.IntRange(min=1),
        help=f"{what} Sample k: seed 42 + k, the judge role's `temperature` (else 0.7); "
        "N× the calls.",
    )


if TYPE_CHECKING:
    from agentlens.providers import LLMClient
    from agentlens.reviews.judge.judge import JudgeSettings, TrajectoryReview
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
@samples_option("Judge each item N times and report per-item variance and agreement.")
@click.option("--no-cache", is_flag=True, help="Do not reuse cached judge answers.")
@click.option(
    "--free-text",
    is_flag=True,
    help="Ask for the tagged free-text answer even where the backend can constrain answers "
    "to a JSON schema (grammar, response_format or forced tool call; the default there).",
)
@click.option(
    "--no-score-distribution",
    "no_distribution",
    is_flag=True,
    help="Ask for no log-probs, so no probability-weighted score. On llama-cpp-python's server "
    "a judge call then takes about a third of the time (docs/judge.md).",
)
@click.option(
    "--dump-prompts",
    "dump_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Write the exact prompt of every call to DIR/<trajectory>/<dimension>.json and "
    "exit without calling a model.",
)
@click.option(
    "--estimate",
    "only_estimate",
    is_flag=True,
    help="Print the calls, input/output tokens and cost per model, and exit without calling.",
)
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
    samples: int,
    no_cache: bool,
    free_text: bool,
    no_distribution: bool,
    dump_dir: str | None,
    only_estimate: bool,
    as_json: bool,
    out: str | None,
    store_url: str | None,
    run_label: str | None,
) -> int:
    """Review each trajectory with an LLM judge, per dimension.

    Each dimension scores 0 / 0.5 / 1; unparseable answers are unscored, never 0.
    Exit 0 ok; 1 an input or call failed; 4 a dimension has no scored item (n/a); 2 usage error."""
    from agentlens.jsonio import dump
    from agentlens.providers import get_provider
    from agentlens.reviews.documents import reviewed_dimensions

    explicit = None if metric_set == AUTO else chosen_dimensions(metric_set, dimensions)
    loaded = load_inputs(paths)
    trajs = loaded.trajectories
    dims_of, pool = (_fixed(explicit), trajs) if explicit else _auto_dimensions(dimensions, trajs)
    client = get_provider(judge_model, role="judge", cache=not no_cache)
    contexts = _contexts(trajs, _diff(repo, base_ref) if repo else None)
    if with_process:
        _add_process_evidence(trajs, contexts, pool=pool)
    settings = _settings(judge_model, budget_tokens, max_tokens, samples, free_text)
    if no_distribution:
        settings = replace(settings, top_logprobs=0)
    if dump_dir or only_estimate:
        _plan_only(client, pool, dims_of, contexts, settings, dump_dir, as_json)
        return report_failures(loaded)
    reviews = _review_all(client, pool, dims_of, contexts, settings)
    doc = _document(client, reviews, with_summary)
    if out:
        dump(doc, out)
    if store_url:
        judged = explicit or reviewed_dimensions(reviews)
        _store(store_url, run_label, client.name, metric_set, judged, trajs, reviews, doc)
    _print(doc, as_json)
    failed = max(report_failures(loaded), _report_call_failures(reviews, doc))
    return max(failed, _report_unscored(reviews))


def _settings(
    judge_model: str, budget_tokens: int, max_tokens: int, samples: int, free_text: bool
) -> JudgeSettings:
    """The judge's settings; its temperature from the role (`llm.roles.judge.temperature`)."""
    from agentlens.reviews.judge.ask import configured_temperature, sampling_temperature
    from agentlens.reviews.judge.judge import JudgeSettings

    temperature = sampling_temperature(configured_temperature(judge_model), samples)
    return JudgeSettings(
        budget_tokens=budget_tokens, max_tokens=max_tokens, temperature=temperature,
        samples=samples, structured=False if free_text else None,
    )  # fmt: skip


def _contexts(trajs: list[Trajectory], repo_diff: str | None) -> dict[str, ReviewContext]:
    from agentlens.reviews.judge.plan import review_context

    return {t.id: review_context(t, repo_diff) for t in trajs}


def _fixed(dims: Sequence[str]) -> Callable[[Trajectory], Sequence[str]]:
    return lambda _traj: dims


def _review_all(
    client: LLMClient, pool: list[Trajectory], dims_of: Callable[[Trajectory], Sequence[str]],
    contexts: dict[str, ReviewContext], settings: JudgeSettings,
) -> list[TrajectoryReview]:  # fmt: skip
    from agentlens.reviews.judge.judge import MAX_REVIEWED, review_run
    from agentlens.reviews.judge.plan import run_summary

    started = time.perf_counter()
    with progress_bar() as progress:
        task = progress.add_task("reviewing", total=min(len(pool), MAX_REVIEWED))
        reviews = client.run(
            review_run(
                client,
                pool,
                dimensions=dims_of,
                contexts=contexts,
                settings=settings,
                on_done=lambda _: progress.advance(task),
            )
        )
    summary = run_summary(client, reviews, time.perf_counter() - started)
    err_console.print(summary, highlight=False, markup=False)
    return reviews


def _document(
    client: LLMClient, reviews: list[TrajectoryReview], with_summary: bool
) -> dict[str, Any]:
    from agentlens.reviews.documents import reviewed_dimensions, reviews_document

    doc = reviews_document(client.name, reviews)
    if with_summary:
        from agentlens.reviews.judge.summary import summarize

        dims = reviewed_dimensions(reviews)
        narratives = client.run(_gather(*(summarize(client, d, reviews) for d in dims)))
        doc["narratives"] = {n.dimension: n.to_dict() for n in narratives}
    return doc


def _print(doc: dict[str, Any], as_json: bool) -> None:
    from agentlens.jsonio import dump
    from agentlens.reviews.markdown import reviews_markdown

    if as_json:
        console.print_json(dump(doc))
    else:
        # soft_wrap: Markdown must not be folded at the terminal's width (headings would break)
        console.print(reviews_markdown(doc), markup=False, highlight=False)


def _plan_only(
    client: LLMClient, pool: list[Trajectory], dims_of: Callable[[Trajectory], Sequence[str]],
    contexts: dict[str, ReviewContext], settings: JudgeSettings, dump_dir: str | None,
    as_json: bool,
) -> None:  # fmt: skip
    """`--dump-prompts` / `--estimate`: what the run would send, and nothing sent."""
    from agentlens.jsonio import dump
    from agentlens.providers import model_of
    from agentlens.providers.prompt_dump import dump_prompts
    from agentlens.reviews.judge.plan import estimate, planned_calls

    calls = planned_calls(pool, dims_of, contexts, settings, settings.is_structured(client))
    if dump_dir:
        written = dump_prompts(calls, dump_dir)
        err_console.print(
            f"wrote {counted(len(written), 'prompt')} under {dump_dir}",
            highlight=False,
            markup=False,
        )
    guess = estimate(
        calls, model_of(client.name), client.prices, free=client.free, samples=settings.samples
    )
    if as_json:
        console.print_json(dump({"estimate": [guess.to_dict()]}))
    else:
        console.print(guess.line(), highlight=False, markup=False)


def _report_unscored(reviews: list[TrajectoryReview]) -> int:
    """Exit `NO_SCORED_ITEM` when a dimension got no scored answer, with one line naming it."""
    from agentlens.reviews import NO_SCORED_ITEM
    from agentlens.reviews.judge.plan import unscored_dimensions

    empty = unscored_dimensions(reviews)
    if not empty:
        return 0
    err_console.print(
        Text.assemble(
            ("unscored:", "red"),
            f" no scored answer for {', '.join(empty)}: their means are n/a "
            f"(exit {NO_SCORED_ITEM})",
        ),
    )
    return NO_SCORED_ITEM


def _store(
    url: str, label: str | None, judge: str, metric_set: str, dimensions: Sequence[str],
    trajs: list[Trajectory], reviews: list[TrajectoryReview], doc: dict[str, Any],
) -> None:  # fmt: skip
    from agentlens.reviews.records import review_records
    from agentlens.store import Run

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
            f"metric set auto: {tagged} of {counted(len(trajs), 'trajectory')} tagged testing, judged on "
            "the testing set; the others on workflows",
            highlight=False,
        )
    if len(pool) < len(trajs):
        err_console.print(
            f"metric set auto: {counted(len(trajs) - len(pool), 'trajectory')} not tagged testing "
            "with none of the --dimension asked: not reviewed",
            highlight=False,
        )
    return dims_of, pool


def _report_call_failures(reviews: list[TrajectoryReview], doc: dict[str, Any]) -> int:
    """One line when judge calls failed outright (after retries), `--summary` calls included;
    exit 1, like unreadable files."""
    from agentlens.reviews.judge.summary import NO_TEXT

    answers = [s for t in reviews for r in t.reviews.values() for s in (r.samples or [r])]
    failed = [a.unscored_reason for a in answers if a.provider_failed]
    narratives = (doc.get("narratives") or {}).values()
    summaries = [n["unscored_reason"] or "" for n in narratives if n["unscored_reason"] != NO_TEXT]
    failed += [reason for reason in summaries if reason.startswith("provider error")]
    if not failed:
        return 0
    calls = len(answers) + len(summaries)
    err_console.print(
        Text.assemble(
            ("failed:", "red"), f" {len(failed)} of {calls} judge calls; first: {failed[0]}"
        ),
    )
    return 1


async def _gather(*jobs: Awaitable[T]) -> list[T]:
    return list(await asyncio.gather(*jobs))


def _diff(repo: str, base_ref: str) -> str:
    """`--repo`'s diff since `base_ref` for the judge, new files included, as the files are (not
    as the agent's index shows them); a failed git (a bad ref, the agent's filter killed for
    memory) is the user's to know, not an empty or partial diff to review."""
    from pathlib import Path

    from agentlens.errors import ConfigError
    from agentlens.verification.base_index import BaseIndex, BaseIndexError

    try:  # sandboxed: its git config is the agent's
        with BaseIndex.of(Path(repo), base_ref) as base:
            return base.diff()
    except BaseIndexError as exc:
        raise ConfigError(
            f"--repo {repo}: git diff {base_ref} failed: {exc.why}; nothing was reviewed "
            "(the judge would have seen no diff, or part of one)"
        ) from None


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
