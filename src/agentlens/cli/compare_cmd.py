"""`agentlens compare RUN_A RUN_B`: regression tests of a new run (B) against an anchor (A).
A run is a folder or files of trajectories, or `store:RUN_ID`, a run kept in the results store.
Exit code 0 ok, 1 warning (or some files could not be read), 2 alert (or a run has no readable
trajectory), so CI can gate a release on it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from agentlens.cli._app import console, err_console, say
from agentlens.cli._inputs import load_inputs, report_failures
from agentlens.cli._store_option import read_store_option
from agentlens.errors import ConfigError
from agentlens.jsonio import dump
from agentlens.list_text import counted
from agentlens.reviews.compare import CompareProfile
from agentlens.reviews.markdown import (
    check_flag,
    compare_markdown,
    format_value,
    note_mark,
    numbered_details,
)
from agentlens.reviews.run_comparison import RunInputs, compare_documents
from agentlens.store import open_store
from agentlens.store.model import INCOMPLETE_NOTE
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
@click.option("--b-reviews", type=click.Path(exists=True, dir_okay=False), default=None,
              help="… of run B.")  # fmt: skip
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
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as one JSON object.")
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
    """Gate a release: compare run B with anchor run A.

    Mann–Whitney / Fisher tests and ratio thresholds (spec §11.2), SxS flags, QI and process deltas.

    RUN_A and RUN_B are folders or files of trajectories, or `store:RUN_ID` for a run kept in
    the results store (`--store`)."""
    _both_or_neither(("--a-verify", a_verify), ("--b-verify", b_verify))
    _both_or_neither(("--a-reviews", a_reviews), ("--b-reviews", b_reviews))
    read_a, unread_a = _trajectories(run_a, store_url)
    read_b, unread_b = _trajectories(run_b, store_url)
    doc = compare_documents(
        RunInputs(run_a, read_a, a_verify, a_reviews, unread_a),
        RunInputs(run_b, read_b, b_verify, b_reviews, unread_b),
        sxs_path=sxs_path,
        with_process=with_process,
        reference_dir=reference_dir,
        profile=profile,
    )
    if md_path:
        Path(md_path).parent.mkdir(parents=True, exist_ok=True)
        Path(md_path).write_text(compare_markdown(doc))
    if as_json:
        console.print_json(dump(doc))
    elif console.is_terminal:
        _print_table(doc)
    else:  # piped: Markdown, ready for a pull-request comment
        console.print(compare_markdown(doc), markup=False, highlight=False)
    for warning in doc.get("warnings", []):
        say("warning", warning)
    return int(doc["exit_code"])


def _both_or_neither(a: tuple[str, object], b: tuple[str, object]) -> None:
    """A check needs the file of both runs; given for one, it would be left out in silence."""
    if bool(a[1]) != bool(b[1]):
        raise ConfigError(
            f"{a[0]} and {b[0]} go together: {(a if a[1] else b)[0]} was given alone, "
            "so its check would compare nothing"
        )


def _trajectories(name: str, store_url: str | None) -> tuple[list[Trajectory], str | None]:
    """A run's trajectories, and why part of it is missing: files that could not be read, or
    a stored run whose command stopped before its last part (a gate must not pass on part of
    a run; the report gets a warning row saying so)."""
    unread = None
    if name.startswith("store:"):
        with open_store(store_url, create=False) as store:
            trajs = store.run_trajectories(name.removeprefix("store:"))
            if not store.run(name.removeprefix("store:")).complete:
                err_console.print(f"{name}: {INCOMPLETE_NOTE}", markup=False, highlight=False)
                unread = "stored run incomplete (its command stopped before its last part)"
    else:
        read = load_inputs([name])
        if report_failures(read):
            unread = f"{counted(len(read.failures), 'file')} could not be read (named on stderr)"
        trajs = read.trajectories
    if not trajs:
        raise ConfigError(f"{name}: no trajectories read, nothing to compare")
    return trajs, unread


FLAG_STYLES = {"ALERT": "bold red", "warning": "yellow", "ok": "green"}


def _print_table(doc: dict[str, Any]) -> None:
    table = Table("check", "test", "run 1", "run 2", "ratio", "p", "flag", "reason")
    notes = numbered_details(doc["checks"])
    for check in doc["checks"]:
        flag = check_flag(check)
        values = [format_value(check[k]) for k in ("v1", "v2", "ratio", "p_value")]
        reason = str(check["reason"]) + note_mark(notes.get(id(check)))
        table.add_row(
            Text(str(check["name"])), Text(str(check["test"])), *map(Text, values),
            Text(flag, style=FLAG_STYLES[flag]), Text(reason),
        )  # fmt: skip
    status = Text(f"{doc['status']} (exit code {doc['exit_code']})", style="bold")
    console.print(Text(f"{doc['run_1']} (reference) vs {doc['run_2']}: ").append(status))
    console.print(table)
    for check in doc["checks"]:
        if id(check) in notes:
            note = f"[{notes[id(check)]}] {check['name']}: {check['detail']}"
            console.print(Text(note))
