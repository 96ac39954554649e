"""`agentlens compare`: everything known about two runs gathered into the regression checks of
`compare.py`: telemetry of their trajectories, formal results and QI from their `verify` and
`review` files, the SxS flags, process metrics, whether the two runs are comparable at all
(`conformity.py`) and their test suites (`testing_compare.py`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentlens.errors import ConfigError
from agentlens.list_text import counted
from agentlens.process.pta import Reference
from agentlens.process.pta_io import read_reference
from agentlens.reviews.compare import Check, CompareProfile, RunSummary, compare_runs
from agentlens.reviews.conformity import setup_check, task_points
from agentlens.reviews.documents import (
    REVIEWS_KIND,
    SXS_KIND,
    formal_of,
    load,
    load_reviews,
    same_run,
)
from agentlens.reviews.judge.judge import TrajectoryReview
from agentlens.reviews.process_evidence import (
    fixed_reference_scores,
    leave_one_out_scores,
    scores_summary,
)
from agentlens.reviews.qi import reviews_qi
from agentlens.reviews.telemetry import RunTelemetry
from agentlens.reviews.testing_compare import run_suite_metrics, testing_checks
from agentlens.reviews.verify_match import (
    MatchTarget,
    Sourced,
    matching_results,
    run_results,
    sourced_verify_results,
)
from agentlens.trajectory import Trajectory


@dataclass
class RunInputs:
    """One run as given to `compare`: its trajectories and its `verify --out` / `review --out`."""

    name: str
    trajectories: list[Trajectory]
    verify: tuple[str, ...] = ()
    reviews: str | None = None
    unread: str | None = None
    """Why part of the run is missing (files that could not be read): a warning row."""


@dataclass
class _RunResults:
    """A run's verify results and reviews that are about its trajectories (`verify_match.py`)."""

    verify: list[Sourced] | None
    reviews: list[TrajectoryReview] | None
    warnings: list[str] = field(default_factory=list)

    @property
    def verify_results(self) -> list[dict[str, Any]]:
        return [r for _, r in self.verify or []]


def compare_documents(
    a: RunInputs,
    b: RunInputs,
    *,
    sxs_path: str | None = None,
    with_process: bool = False,
    reference_dir: str | None = None,
    profile: CompareProfile = "default",
) -> dict[str, Any]:
    """The comparison of run B against the anchor A, as the `compare --json` document (its
    `exit_code`: 0 ok, 1 warning, 2 alert). `reference_dir` implies process metrics."""
    matched = [_run_results(run) for run in (a, b)]
    summaries = [_summary(run, results) for run, results in zip((a, b), matched, strict=True)]
    with_process = with_process or reference_dir is not None
    process = _process(a.trajectories, b.trajectories, reference_dir) if with_process else None
    if process:
        summaries[0].process = process["runs"]["run_1"]["samples"]
        summaries[1].process = process["runs"]["run_2"]["samples"]
    if sxs_path:
        sxs = load(sxs_path, SXS_KIND)
        _refuse_swapped(sxs_path, sxs, a.name, b.name)
        summaries[1].sxs_flags = sxs["dimensions"]
    result = compare_runs(summaries[0], summaries[1], _note(process), profile)
    judges = [load(r.reviews, REVIEWS_KIND).get("judge") if r.reviews else None for r in (a, b)]
    points = task_points(a.trajectories), task_points(b.trajectories)
    result.checks.insert(0, setup_check(*points, *judges))
    missing = [f"run {i}: {run.unread}" for i, run in enumerate((a, b), 1) if run.unread]
    if missing:  # the exit code says so; the report must say why
        result.checks.insert(
            1, Check("inputs", "read", None, None, warning=True, reason="; ".join(missing))
        )
    if matched[0].verify is not None and matched[1].verify is not None:
        tests = [run_suite_metrics(results.verify_results) for results in matched]
        result.checks.extend(testing_checks(*tests))
    doc = result.to_dict()
    warnings = [w for results in matched for w in results.warnings]
    if warnings:
        doc["warnings"] = warnings
    if process:
        doc["process"] = process
    return doc


def _refuse_swapped(path: str, sxs: dict[str, Any], run_a: str, run_b: str) -> None:
    """An SxS of B vs A scores every task with the other sign, and its flags are asymmetric
    (warning at ≤ −0.2 or ≥ 0.3): read for `compare A B` they would judge the wrong run."""
    given = sxs.get("run_a"), sxs.get("run_b")
    if same_run(given[0], run_b) and same_run(given[1], run_a) and not same_run(run_a, run_b):
        raise ConfigError(
            f"{path}: the SxS of {given[0]} (A) vs {given[1]} (B), the other way round from "
            f"this comparison; run `agentlens sxs {run_a} {run_b}` for its flags"
        )


def _run_results(run: RunInputs) -> _RunResults:
    """The verify results and reviews about the run's trajectories: another run's are left out
    (a warning), and a file about none of them is refused, as in `qi`."""
    ids = [t.id for t in run.trajectories]
    found = _RunResults(None, None)
    if run.verify:
        verified = run_results(sourced_verify_results(run.verify), ids, run.name)
        found.verify, found.warnings = verified.sourced, verified.warnings
    if run.reviews:
        reviews = load_reviews(run.reviews)
        docs = [
            (run.reviews, {"trajectory_id": r.trajectory_id, "at": i})
            for i, r in enumerate(reviews)
        ]
        reviewed = run_results(docs, ids, run.name, kind="review")
        found.reviews = [reviews[r["at"]] for r in reviewed.results]
        found.warnings.extend(reviewed.warnings)
    return found


def _summary(run: RunInputs, results: _RunResults) -> RunSummary:
    summary = RunSummary(run.name, RunTelemetry.of(run.trajectories))
    summary.formal = None if results.verify is None else formal_of(results.verify_results)
    if run.reviews and results.reviews is not None:
        index = reviews_qi(results.reviews, _qi_formal(run.reviews, results))
        summary.qi, summary.qi_na = index.value, index.na_reason
    return summary


def _qi_formal(reviews_path: str, results: _RunResults) -> list[int] | None:
    """The formal results of the reviewed runs, as `qi --reviews --verify` counts them (a
    result naming no trajectory counts; the run check has said it is unchecked)."""
    if results.verify is None or results.reviews is None:
        return None
    named = [(p, r) for p, r in results.verify if r.get("trajectory_id") is not None]
    unnamed = [r for _, r in results.verify if r.get("trajectory_id") is None]
    reviewed = [r.trajectory_id for r in results.reviews]
    target = MatchTarget(reviews_path, "reviewed", "the QI's formal pass rate")
    matched = matching_results(named, reviewed, target)  # the unnamed were warned of already
    results.warnings.extend(matched.warnings)
    return formal_of(matched.results + unnamed)


def _process(
    trajs_a: list[Trajectory], trajs_b: list[Trajectory], reference_dir: str | None
) -> dict[str, Any]:
    if reference_dir:
        scores = fixed_reference_scores(trajs_a + trajs_b, _references(reference_dir))
    else:
        scores = leave_one_out_scores(trajs_a + trajs_b)
    return scores_summary(scores, {"run_1": trajs_a, "run_2": trajs_b})


def _references(directory: str) -> dict[str, Reference]:
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
        donors = counted(process["in_sample"], "run")
        note += f"; {donors} left out as donors of their own reference (in-sample)"
    return note
