"""`agentlens cohort DIR…`: group runs by task, build references from passing runs, score the
others, and print the cohort tables (tiers, models, waste, mechanisms, separation, curation)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import orjson
from rich.console import Console

from agentlens.cli._app import console, err_console, progress_bar, say
from agentlens.cli._cohort_inputs import spilled_inputs
from agentlens.cli._inputs import _context_option, read_options, report_failures
from agentlens.cli._process_options import engine_option, profile_option
from agentlens.cli._store_option import StopNote, label_option, run_key, store_option
from agentlens.cli._unit_failures import report_unit_failures
from agentlens.engine import Failure, get_engine
from agentlens.errors import ConfigError
from agentlens.list_text import counted
from agentlens.process.tiers import TIER_HELP
from agentlens.visible_text import json_text, one_line

if TYPE_CHECKING:
    from agentlens.process.cohort_rows import Row
    from agentlens.process.cohort_runs import RunSpill
    from agentlens.process.cohort_tasks import SaveTask
    from agentlens.process.profiles import Profile
    from agentlens.process.protocols import RunFailure
    from agentlens.process.run_units import CohortRun, TaskSplit
    from agentlens.seams import Engine
    from agentlens.trajectory import Trajectory

PROTOCOLS = ("agentlens-bench", "leave-one-out")  # agentlens.process.protocols, not imported yet


@click.command(epilog=TIER_HELP)
@click.argument("paths", nargs=-1)
@click.option(
    "--protocol",
    type=click.Choice(PROTOCOLS),
    default="leave-one-out",
    show_default=True,
    help="leave-one-out: each run against its task's other passing runs; agentlens-bench: "
    "5 passing donors per task, the rest scored, as the release did.",
)
@click.option("--k", "k", type=click.IntRange(min=1), default=None,
              help="Donors per reference (bench: 5; LOO: all).")  # fmt: skip
@click.option("--seed", default=42, show_default=True, help="Donor shuffle seed.")
@click.option("--rows", "rows_csv", type=click.Path(exists=True, dir_okay=False),
              help="Skip scoring: tables from an annotation CSV (the release's, judged as "
                   "sdk-compat) or the rows --out wrote (.jsonl/.csv/.parquet, judged as their "
                   "profile column says).")  # fmt: skip
@click.option("--boot", default=2000, show_default=True, type=click.IntRange(min=1),
              help="Bootstrap resamples for AUROC CIs.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="All tables as one JSON object.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False),
              help="Write the scored rows (.jsonl/.csv/.parquet).")  # fmt: skip
@click.option("--select", "selection", default="all", show_default=True,
              help="Rows written by --out: all (every row), drop-lucky or top-<k> (passing runs only).")  # fmt: skip
@click.option("--no-tables", is_flag=True,
              help="Print no tables (no validity figures): score, then write --out/--store.")  # fmt: skip
@profile_option
@engine_option
@store_option
@label_option
@read_options
def cohort(
    paths: tuple[str, ...], protocol: str, k: int | None, seed: int, rows_csv: str | None,
    boot: int, as_json: bool, out_path: str | None, selection: str, no_tables: bool,
    profile: Profile, engine_spec: str, store_url: str | None, run_label: str | None,
    labels: tuple[str, ...], lenient: bool, format: str | None,
) -> int:  # fmt: skip
    """Score every run of each task against its passing runs.

    Prints the cohort tables, ending with the validity
    table (AUROC with a task-bootstrap CI, boundary balanced accuracy, tier shares beside the
    paper's claims; docs/validity.md). A run whose labelling or scoring fails is one `failed:`
    line naming run, step and reason; the other runs of its task are still scored (exit 1).
    When no task meets the protocol's rule, each task is named with its counts and 0 runs are
    scored (exit 0; with --strict, exit 2)."""
    _check_usage(selection, out_path, rows_csv, store_url)
    code = 0
    failed: list[tuple[str, Failure | RunFailure]] = []
    rows: Sequence[Row]
    if rows_csv:
        rows, profile = _scored_rows(rows_csv, profile)
    elif paths:
        settings = {"protocol": protocol, "profile": profile, "k": k, "seed": seed}
        read = {"format": format, "lenient": lenient, "labels": labels}
        keep = not no_tables or selection != "all"  # else the rows only go to --out
        rows, failed, code = _score_paths(paths, settings, engine_spec, read, (store_url, run_label),
                                          tables=keep)  # fmt: skip
    else:
        raise ConfigError("give trace paths, or --rows CSV")
    written = _export(rows, selection, out_path)  # before the tables: stdout may be a `| head`
    if not no_tables:
        show(rows, profile, boot=boot, as_json=as_json, out=console)
    code = max(code, report_unit_failures(failed, f"{counted(len(rows), 'run')} scored"))
    if paths and not rows_csv and not rows and not failed:
        # files failed (said above, exit 1; a `not scored:` line only if others were read), or no
        # task meets the protocol rule (not an error)
        why = "see the `failed:` lines above" if code else "see `not scored:` above"
        err_console.print(f"0 runs scored ({why})", highlight=False)
    if written is not None:
        err_console.print(
            f"wrote {counted(written, 'row')} → {out_path}", highlight=False, markup=False
        )
    return code


def _check_usage(
    selection: str, out_path: str | None, rows_csv: str | None, store_url: str | None
) -> None:
    """Usage errors, said before any scoring rather than after it."""
    from agentlens.process.curation import check_selection, check_writable, export_format

    check_selection(selection)
    if out_path:
        export_format(Path(out_path))
        check_writable(Path(out_path))
    if rows_csv and store_url:
        raise ConfigError("--store saves runs scored from traces; --rows CSV scores none")


def _export(rows: Sequence[Row], selection: str, out_path: str | None) -> int | None:
    """Write the selected rows to `--out`; how many, or None without `--out`."""
    if not out_path:
        return None
    from agentlens.process.cohort_table import full_rows
    from agentlens.process.curation import export_rows, select

    chosen = rows if selection == "all" else select(rows, selection)
    export_rows(full_rows(chosen), out_path)
    return len(chosen)


def _scored_rows(path: str, profile: Profile) -> tuple[Sequence[Row], Profile]:
    """Rows (the release's CSV, or `--out`'s in any format) and the profile whose thresholds judge
    them: the one that scored them (their `profile` column, from `--out`; the release's CSV:
    sdk-compat), unless --profile was given, which then re-tiers them, said once."""
    from agentlens.process.cohort_rows import read_cohort_rows
    from agentlens.process.profiles import PROFILES

    rows = read_cohort_rows(path)
    scored_with = {str(row.get("profile") or "sdk-compat") for row in rows}
    found = scored_with.pop() if len(scored_with) == 1 else None
    if found not in PROFILES or found == profile:
        return rows, profile
    source = click.get_current_context().get_parameter_source("profile")
    if source is click.core.ParameterSource.DEFAULT:
        return rows, found  # type: ignore[return-value]
    say("warning", f"{path}: rows scored with {found!r}; the tables apply the thresholds of "
                   f"{profile!r}")  # fmt: skip
    return rows, profile


def _score_paths(
    paths: Sequence[str],
    settings: dict[str, Any],
    engine_spec: str,
    read: dict[str, Any],
    store: tuple[str | None, str | None],
    *,
    tables: bool,
) -> tuple[Sequence[Row], list[tuple[str, Failure | RunFailure]], int]:
    """`score_cohort` on the runs read from `paths` (`read`: the read options), saved to
    `store` (url, label) if given; the exit code of the read."""
    note = StopNote(store[0])
    with (
        note.watch(),
        get_engine(engine_spec) as engine,
        spilled_inputs(paths, engine, **read) as (summary, spill),
        task_saver(*store, settings, spill.refs, note) as save,
    ):
        _say_copies(spill)
        rows, failed = score_cohort(
            spill.refs, settings["protocol"], settings["profile"], k=settings["k"],
            seed=settings["seed"], engine=engine, spill=spill, save=save, tables=tables,
        )  # fmt: skip
    return rows, failed, report_failures(summary)


def score_cohort(
    trajs: Sequence[CohortRun],
    protocol: str,
    profile: Profile,
    *,
    k: int | None,
    seed: int,
    engine: Engine | None = None,
    spill: RunSpill | None = None,
    save: SaveTask | None = None,
    tables: bool = True,
) -> tuple[Sequence[Row], list[tuple[str, Failure | RunFailure]]]:
    """The scored rows in split order, each run that failed alone (`RunFailure`) and each task
    whose work unit failed as a whole (its rows left out). With `spill`, `trajs` are the
    `RunRef`s of `read_cohort` (split by their positions, a task at a time: `cohort_splits`),
    and each task's runs are read back from the spill file by
    whoever scores it; with `save`, each task's results are saved as the task finishes.
    Without `tables` (nothing reads the rows but `--out`), no column stays in memory: the rows
    wait whole in their file."""
    from agentlens.process.cohort_splits import spilled_splits
    from agentlens.process.cohort_table import KEPT
    from agentlens.process.cohort_tasks import TaskRows
    from agentlens.process.protocol_notes import unscored_tasks
    from agentlens.process.protocols import split_cohort

    splits: Sequence[TaskSplit[Any]]
    if spill is not None:  # the runs by their positions in the spill
        splits, unscored = spilled_splits(spill, protocol, k=k, seed=seed)
    else:
        splits = split_cohort(trajs, protocol, k=k, seed=seed)
        unscored = unscored_tasks(trajs, splits, protocol)
    _say_unscored(unscored, protocol, k, scored=bool(splits))
    with progress_bar() as progress:
        bar = progress.add_task("scoring", total=len(splits))
        tasks = TaskRows(splits, spill, save, columns=KEPT if tables else ())
        tasks.score(profile, engine, lambda: progress.advance(bar))
    return tasks.rows(), tasks.failures()


def _say_copies(spill: RunSpill) -> None:
    from agentlens.process.cohort_splits import TaskRuns
    from agentlens.process.protocol_notes import copied_files

    for copies in copied_files(TaskRuns(spill)):
        say("warning", "same content, scored as separate runs (each other's donor under "
                       f"leave-one-out: expect high scores; keep one): {one_line(copies)}")  # fmt: skip


def _say_unscored(unscored: list[str], protocol: str, k: int | None, *, scored: bool) -> None:
    from agentlens.process.protocol_notes import protocol_rule

    if not scored and _context_option("strict"):  # else: 0 runs scored, exit 0, tasks named
        raise ConfigError(
            f"no task has enough passing runs for the {protocol} protocol: "
            f"{protocol_rule(protocol, k)}; found {'; '.join(unscored)} "
            "(pass/fail labels come from the files or from --labels; --strict)"
        )
    if unscored:  # a task left out is named, with what it had
        rule = f"{protocol}: {protocol_rule(protocol, k)}"
        err_console.print(rule, highlight=False, markup=False)
    for line in unscored:
        err_console.print(f"not scored: {one_line(line)}", highlight=False, markup=False)


@contextmanager
def task_saver(
    url: str | None,
    label: str | None,
    settings: dict[str, Any],
    runs: Sequence[CohortRun],
    note: StopNote,
) -> Iterator[SaveTask | None]:
    """With `--store`: save each task's trajectories and records as it finishes, under a run id
    made from the settings and the runs read, so that the same cohort run again (or resumed
    after an interruption) adds nothing twice. Without: None."""
    if not url:
        yield None
        return
    from agentlens.process.records import PROCESS_SCORER, score_records
    from agentlens.store import Run, open_store

    scorer = PROCESS_SCORER.format(profile=settings["profile"])
    run = Run(kind="score", scorer=scorer, label=label, settings={"command": "cohort"} | settings,
              id=run_key(settings, runs, label))  # fmt: skip
    with open_store(url) as store:
        added, parts = [0], [0]

        def save(trajectories: list[Trajectory], results: list[Any]) -> None:
            records = score_records(zip(trajectories, results, strict=True))
            added[0] += store.save_part(run, trajectories, records)
            parts[0] += 1

        with note.saving(store, run.id):
            yield save
        store.finish_parts(run.id)
        # no part saved, no run made: naming its id would send the user looking for it
        new = counted(added[0], "new record")
        said = (f"stored {new} in run {run.id[:12]} in {store.url}" if parts[0]
                else f"nothing stored in {store.url}: no run was scored")  # fmt: skip
        err_console.print(said, highlight=False, markup=False)


def show(rows: Sequence[Row], profile: Profile, *, boot: int, as_json: bool, out: Console) -> None:
    from agentlens.cli._cohort_tables import print_report, validity_table
    from agentlens.process.cohort import cohort_report
    from agentlens.process.curation import curation_table
    from agentlens.process.validity import cohort_validity

    if not rows and not as_json:
        return  # tables of nothing; `cohort` says why no run was scored
    report = cohort_report(rows, n_boot=boot)
    curation = curation_table(rows, profile=profile)
    figures = cohort_validity(rows, profile, n_boot=boot)
    if as_json:
        doc: dict[str, Any] = asdict(report) | {"curation": [asdict(c) for c in curation]}
        doc["validity"] = asdict(figures) if figures else None
        click.echo(json_text(orjson.dumps(doc, option=orjson.OPT_SERIALIZE_NUMPY)))
    else:
        print_report(out, report, curation)
        if figures:
            out.print(validity_table(figures))
