"""`agentlens score RUNS… --reference ref.json`: process scores of runs against a reference."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import click
import orjson
from rich.table import Table
from rich.text import Text

from agentlens.cli._app import WIDE, console, err_console, say
from agentlens.cli._cohort_inputs import spilled_inputs
from agentlens.cli._inputs import read_options, report_failures
from agentlens.cli._process_options import engine_option
from agentlens.cli._store_option import StopNote, label_option, run_key, store_option
from agentlens.cli._unit_failures import report_unit_failures
from agentlens.engine import Failure, get_engine
from agentlens.list_text import counted
from agentlens.process.profiles import PROFILES, Profile, get_profile
from agentlens.process.tiers import TIER_HELP, shown_score
from agentlens.visible_text import json_text

if TYPE_CHECKING:
    from agentlens.engine.outcome import Outcome
    from agentlens.process.cohort_runs import RunRef, RunSpill
    from agentlens.process.pta import Reference
    from agentlens.process.result import ProcessResult
    from agentlens.process.run_units import RunFailure


@click.command(epilog=TIER_HELP)
@click.argument("paths", nargs=-1, required=True)
@click.option("--reference", "reference_path", required=True, type=click.Path(dir_okay=False),
              help="The graph `agentlens reference build -o` wrote.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="One JSON object per run, with reasons.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Write the 40 columns.")
@click.option("--parquet", "parquet_path", type=click.Path(dir_okay=False), help="Same, Parquet.")
@click.option(
    "--profile",
    type=click.Choice(list(PROFILES)),
    default=None,
    help="Default: the profile the reference was built with.",
)
@engine_option
@store_option
@label_option
@read_options
def score(
    paths: tuple[str, ...],
    reference_path: str,
    as_json: bool,
    csv_path: str | None,
    parquet_path: str | None,
    profile: Profile | None,
    labels: tuple[str, ...],
    lenient: bool,
    format: str | None,
    store_url: str | None,
    run_label: str | None,
    engine_spec: str,
) -> int:
    """Score runs against a reference graph. Per run: signals, composite, tier, waste and
    Lucky-Pass mechanism.

    The composite's reason shows its arithmetic (under calibrated: each term's weight, mean and
    sd); under calibrated, "moved most by" names the three terms whose parts of that sum
    (weight·(x − mean)/sd, in logit units) pulled the run furthest from the dev runs' average.
    A run that cannot be scored is one `failed:` line; the others are still scored (exit 1).
    """
    from agentlens.process.cohort_runs import score_spilled_run, spilled_runs
    from agentlens.process.curation import check_writable, export_format
    from agentlens.process.reference_guards import reference_warnings

    for out, kind in ((csv_path, "csv"), (parquet_path, "parquet")):
        if out:  # a usage error now, not after scoring
            export_format(Path(out), kind)
            check_writable(Path(out))
    reference, chosen = _reference(reference_path, profile)
    note = StopNote(store_url)
    with (
        note.watch(),
        get_engine(engine_spec) as engine,
        spilled_inputs(paths, engine, format=format, lenient=lenient, labels=labels) as (
            result,
            spill,
        ),
    ):
        _warn_all(reference_warnings(spill.refs, reference))
        runs = spilled_runs(spill, getattr(engine, "local", True))
        outcomes = engine.map(partial(score_spilled_run, reference=reference, profile=chosen), runs)
        scored, results, failed = _sorted_outcomes(spill.refs, outcomes)
        if store_url:
            _store(store_url, run_label, reference_path, chosen, scored, results, spill, note)
    write_annotations(results, csv_path, parquet_path)  # before stdout, which `| head` may close
    _warn_all(_unmarked_donors(results, csv_path or parquet_path))
    if as_json:
        for res in results:
            click.echo(json_text(orjson.dumps(res.to_dict())))
    else:
        console.print(score_table(results) if console.width >= WIDE else score_lines(results))
    code = report_failures(result)
    return max(code, report_unit_failures(failed, f"{counted(len(results), 'run')} scored"))


def _reference(path: str, profile: Profile | None) -> tuple[Reference, Profile]:
    """The saved reference with its donors' baseline, and the profile to score with (the
    reference's own unless one is named; a different one is warned about)."""
    from agentlens.process.pta_io import read_reference
    from agentlens.process.reference_guards import nothing_to_compare

    reference = read_reference(path)
    chosen: Profile = profile or reference.profile
    if chosen != reference.profile:
        say("warning", f"reference built with {reference.profile!r}, scoring with {chosen!r}")
    if why := nothing_to_compare(reference):
        say("warning", f"{path}: {why}")
    return reference, chosen


def _warn_all(lines: list[str]) -> None:
    for line in lines:
        say("warning", line)


def _unmarked_donors(results: list[ProcessResult], table_path: str | None) -> list[str]:
    """The 40 columns are the release's and have no place for the in-sample mark: say which
    rows need it."""
    donors = [r.trajectory_id for r in results if r.in_sample]
    if not (table_path and donors):
        return []
    return [
        f"{table_path}: {counted(len(donors), 'row')} scored in-sample (the donors named above), "
        "unmarked: the release's 40 columns have no field for it; --json and --store keep "
        '"in_sample"'
    ]


def _sorted_outcomes(
    trajs: Sequence[RunRef], outcomes: Sequence[Outcome[ProcessResult | RunFailure]]
) -> tuple[list[RunRef], list[ProcessResult], list[tuple[str, Failure | RunFailure]]]:
    """The scored runs and their results; each run that failed (a `RunFailure` names its step,
    a unit that died is `Failure`)."""
    from agentlens.process.result import ProcessResult
    from agentlens.process.run_units import RunFailure

    values = [o.value for o in outcomes]
    results = [v for v in values if isinstance(v, ProcessResult)]
    scored = [t for t, v in zip(trajs, values, strict=True) if isinstance(v, ProcessResult)]
    failed: list[tuple[str, Failure | RunFailure]] = [
        (_run_name(trajs[o.index]), o.error) for o in outcomes if o.error
    ]
    failed += [(v.run, v) for v in values if isinstance(v, RunFailure)]
    return scored, results, failed


def _run_name(traj: RunRef) -> str:
    where = traj.source.path or traj.id
    index = f"#{traj.source.index}" if traj.source.index is not None else ""
    return f"{where}{index} [{traj.source.format}]"


def _store(
    url: str, label: str | None, reference_path: str, profile: Profile,
    stubs: list[RunRef], results: list[ProcessResult], spill: RunSpill, note: StopNote,
) -> None:  # fmt: skip
    """Saved a hundred runs at a time, read back from the spill file, under an id made from
    the settings and the runs: scoring the same runs again adds nothing twice."""
    from agentlens.process.records import PROCESS_SCORER, score_records
    from agentlens.store import Run, open_store

    reference = Path(reference_path).resolve()
    settings = {"reference": str(reference), "profile": profile,
                "reference_sha256": hashlib.sha256(reference.read_bytes()).hexdigest()}  # fmt: skip
    run = Run(kind="score", scorer=PROCESS_SCORER.format(profile=profile), label=label,
              settings=settings, id=run_key(settings, stubs, label))  # fmt: skip
    added = 0
    with open_store(url) as store:
        with note.saving(store, run.id):
            for start in range(0, len(stubs), 100):
                trajectories = spill.load(stubs[start : start + 100])
                pairs = zip(trajectories, results[start : start + 100], strict=True)
                added += store.save_part(run, trajectories, score_records(pairs))
        store.finish_parts(run.id)
        new = counted(added, "new record")
        err_console.print(f"stored {new} in run {run.id[:12]} in {store.url}",
                          highlight=False, markup=False)  # fmt: skip


SCALES = "score, struct, cov: 0–100; coh, temp: 0–1; waste: wasted steps"
MOVED_SCALE = "; moved most by: a term's part of the score, in logit units (see --help)"


def score_lines(results: list[ProcessResult]) -> Text:
    """The table's cells as three lines per run, for terminals too narrow for ten columns."""
    text = Text(f"{counted(len(results), 'run')} scored", style="bold")
    for r in results:
        s = r.signals
        text.append(f"\n{_run_cell(r)}\n  {r.outcome}{r.cut_note}")
        text.append(f", score {_score(r)} ({r.tier or '-'})")
        text.append(f", waste {r.total_wasted_steps}")
        if r.mechanism_name:
            text.append(f", {r.mechanism_name}")
        text.append(
            f"\n  struct {s['struct'].value:.1f}  cov {s['cov'].value:.1f}"
            f"  coh {s['coh'].value:.2f}  temp {s['temp'].value:.2f}"
        )
        if moved := drivers_text(r):
            text.append(f"\n  moved most by: {moved}")
    moved_shown = any(drivers_text(r) for r in results)
    return text.append(f"\n{SCALES}{MOVED_SCALE if moved_shown else ''}")


def _run_cell(result: ProcessResult) -> str:
    return f"{result.trajectory_id} (in-sample)" if result.in_sample else result.trajectory_id


def _score(result: ProcessResult) -> str:
    return shown_score(result.score, get_profile(result.profile))


def drivers_text(result: ProcessResult) -> str:
    """The terms that moved a `calibrated` score most, with their signed parts of the logit
    (`signals.composite.reason` has the whole sum); "" for the other profiles."""
    from agentlens.process.calibrated import drivers

    parts = drivers(get_profile(result.profile), result.signals)
    return "  ".join(f"{name} {part:+.2f}" for name, part in parts)


def score_table(results: list[ProcessResult]) -> Table:
    table = Table(title=f"{counted(len(results), 'run')} scored")
    for name in (
        "run",
        "outcome",
        "score",
        "tier",
        "struct",
        "cov",
        "coh",
        "temp",
        "waste",
        "mechanism",
    ):
        table.add_column(name, overflow="fold")
    moved = [drivers_text(r) for r in results]
    shown = any(moved)
    if shown:
        table.add_column("moved most by", overflow="fold")
    table.caption = SCALES + (MOVED_SCALE if shown else "")
    for r, why in zip(results, moved, strict=True):
        s = r.signals
        table.add_row(
            _run_cell(r), f"{r.outcome}{r.cut_note}", _score(r), r.tier or "-",
            f"{s['struct'].value:.1f}", f"{s['cov'].value:.1f}", f"{s['coh'].value:.2f}",
            f"{s['temp'].value:.2f}", str(r.total_wasted_steps), r.mechanism_name or "",
            *([why] if shown else []),
        )  # fmt: skip
    return table


def write_annotations(
    results: list[ProcessResult], csv_path: str | None, parquet_path: str | None
) -> None:
    """The 40 AgentLens-Bench columns, in the release's order, diffable against its CSV."""
    from agentlens.process.curation import export_rows

    if not (csv_path or parquet_path):
        return
    rows = [_columns(r.annotation_row()) for r in results]
    if csv_path:
        export_rows(rows, csv_path, "csv")
    if parquet_path:
        export_rows(rows, parquet_path, "parquet")


def _columns(row: dict[str, object]) -> dict[str, object]:
    from agentlens.process.result import ANNOTATION_COLUMNS

    return {c: row[c] for c in ANNOTATION_COLUMNS}
