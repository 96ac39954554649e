"""`agentlens compare RUN_A RUN_B`: regression tests of a new run (B) against an anchor (A).
A run is a folder or files of trajectories, or `store:RUN_ID`, a run kept in the results store.
Exit code 0 ok, 1 warning (or some files could not be read), 2 alert (or a run has no readable
trajectory), so CI can gate a release on it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from agentlens.cli._app import console
from agentlens.cli._store_option import read_store_option
from agentlens.errors import ConfigError

if TYPE_CHECKING:
    from agentlens.process.pta import Reference
    from agentlens.reviews.compare import CompareProfile
    from agentlens.trajectory import Trajectory


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
    help="Also compare process metrics (Lucky rate, V coverage, waste): references from the "
    "passing runs of both runs pooled, each run scored leave-one-out.",
)
@click.option(
    "--reference",
    "reference_dir",
    type=click.Path(exists=True, file_okay=False),
    default=None,
    help="Process metrics against fixed references instead, DIR/<task_id>.json "
    "(`agentlens reference build -o`); tasks without one are skipped. Implies --process.",
)
@click.option(
    "--profile",
    type=click.Choice(["default", "released"]),
    default="default",
    show_default=True,
    help="`released`: the released evaluator's per-tool upper alert bound 1.2/warn instead of "
    "1.2/alert (spec §13.10).",
)
@click.option("--json", "as_json", is_flag=True)
@read_store_option
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
    reference_dir: str | None,
    profile: CompareProfile,
    as_json: bool,
    store_url: str | None,
    md_path: str | None,
) -> int:
    """Mann–Whitney / Fisher tests and ratio thresholds (spec §11.2), SxS flags, QI and process deltas.

    RUN_A and RUN_B are folders or files of trajectories, or `store:RUN_ID` for a run kept in
    the results store (`--store`)."""
    from agentlens.cli._inputs import load_inputs, report_failures
    from agentlens.reviews.compare import RunSummary, compare_runs
    from agentlens.reviews.conformity import setup_check, task_points
    from agentlens.reviews.report import (
        REVIEWS_KIND,
        SXS_KIND,
        compare_markdown,
        dump,
        formal_results,
        load,
        verify_results,
    )
    from agentlens.reviews.telemetry import RunTelemetry
    from agentlens.reviews.testing_compare import run_suite_metrics, testing_checks

    summaries, runs, failed = [], [], 0
    for name, verify, reviews in ((run_a, a_verify, a_reviews), (run_b, b_verify, b_reviews)):
        if name.startswith("store:"):
            trajs = _stored(store_url, name.removeprefix("store:"))
        else:
            read = load_inputs([name])
            failed += report_failures(read)  # a gate must not pass on files it could not read
            trajs = read.trajectories
        if not trajs:
            raise ConfigError(f"{name}: no trajectories read, nothing to compare")
        summary = RunSummary(name, RunTelemetry.of(trajs))
        summary.formal = formal_results(verify) if verify else None
        summary.qi = _qi(reviews, summary.formal) if reviews else None
        summaries.append(summary)
        runs.append(trajs)
    with_process = with_process or reference_dir is not None
    process = _process(runs[0], runs[1], reference_dir) if with_process else None
    if process:
        summaries[0].process = process["runs"]["run_1"]["samples"]
        summaries[1].process = process["runs"]["run_2"]["samples"]
    if sxs_path:
        summaries[1].sxs_flags = load(sxs_path, SXS_KIND)["dimensions"]
    result = compare_runs(summaries[0], summaries[1], _note(process), profile)
    judges = [load(p, REVIEWS_KIND).get("judge") if p else None for p in (a_reviews, b_reviews)]
    result.checks.insert(0, setup_check(task_points(runs[0]), task_points(runs[1]), *judges))
    if a_verify and b_verify:
        tests = [run_suite_metrics(verify_results(paths)) for paths in (a_verify, b_verify)]
        result.checks.extend(testing_checks(*tests))
    doc = result.to_dict()
    if process:
        doc["process"] = process
    if md_path:
        Path(md_path).parent.mkdir(parents=True, exist_ok=True)
        Path(md_path).write_text(compare_markdown(doc))
    if as_json:
        console.print_json(dump(doc))
    elif console.is_terminal:
        _print_table(doc)
    else:  # piped: Markdown, ready for a pull-request comment
        console.print(compare_markdown(doc), markup=False, highlight=False, soft_wrap=True)
    return max(result.exit_code, failed)


FLAG_STYLES = {"ALERT": "bold red", "warning": "yellow", "ok": "green"}


def _print_table(doc: dict[str, Any]) -> None:
    from rich.table import Table
    from rich.text import Text

    from agentlens.reviews.report import check_flag, format_value

    table = Table("check", "test", "run 1", "run 2", "ratio", "p", "flag", "reason")
    for check in doc["checks"]:
        flag = check_flag(check)
        values = [format_value(check[k]) for k in ("v1", "v2", "ratio", "p_value")]
        table.add_row(
            Text(str(check["name"])), Text(str(check["test"])), *map(Text, values),
            Text(flag, style=FLAG_STYLES[flag]), Text(str(check["reason"])),
        )  # fmt: skip
    status = Text(f"{doc['status']} (exit code {doc['exit_code']})", style="bold")
    console.print(Text(f"{doc['run_1']} (reference) vs {doc['run_2']}: ").append(status))
    console.print(table)


def _stored(url: str | None, run_id: str) -> list[Trajectory]:
    from agentlens.store import open_store

    with open_store(url, create=False) as store:
        return store.run_trajectories(run_id)


def _process(
    trajs_a: list[Trajectory], trajs_b: list[Trajectory], reference_dir: str | None
) -> dict[str, Any]:
    from agentlens.reviews.process_evidence import (
        fixed_reference_scores,
        leave_one_out_scores,
        scores_summary,
    )

    if reference_dir:
        scores = fixed_reference_scores(trajs_a + trajs_b, _references(reference_dir))
    else:
        scores = leave_one_out_scores(trajs_a + trajs_b)
    return scores_summary(scores, {"run_1": trajs_a, "run_2": trajs_b})


def _references(directory: str) -> dict[str, Reference]:
    from agentlens.process.pta_io import read_reference

    paths = sorted(Path(directory).glob("*.json"))
    if not paths:
        raise ConfigError(
            f"{directory}: no <task_id>.json references (write them with `agentlens reference build`)"
        )
    return {path.stem: read_reference(path) for path in paths}


def _note(process: dict[str, Any] | None) -> str | None:
    if not process:
        return None
    r1, r2 = process["runs"]["run_1"], process["runs"]["run_2"]
    skipped = process["tasks_skipped"]
    note = (
        f"{process['method']}; run 1: {r1['scored']} scored, {len(r1['unscored_ids'])} not; "
        f"run 2: {r2['scored']} scored, {len(r2['unscored_ids'])} not; tasks skipped (too few "
        f"passing runs or no reference): {len(skipped)}"
    )
    if process["in_sample"]:
        note += f"; {process['in_sample']} scored runs are donors of their own reference"
    return note


def _qi(reviews_path: str, formal: list[int] | None) -> float | None:
    from agentlens.reviews.judge.judge import aggregate
    from agentlens.reviews.qi import quality_index
    from agentlens.reviews.report import load_reviews

    means = {d: s.mean for d, s in aggregate(load_reviews(reviews_path)).items()}
    return quality_index(sum(formal) / len(formal) if formal else None, means).value
