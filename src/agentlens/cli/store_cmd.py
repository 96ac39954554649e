"""`agentlens store …`: import trajectories into the results store and look at what it holds."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import click
import msgspec
from rich.table import Table
from rich.text import Text

from agentlens.cli._app import console, err_console
from agentlens.cli._inputs import read_options, report_failures, stream_inputs
from agentlens.cli._output import write_whole
from agentlens.cli._store_option import StopNote, read_store_option
from agentlens.formats.jsonl import dump_jsonl
from agentlens.list_text import counted
from agentlens.store import Metric, Run, default_url, open_store, printable_url
from agentlens.store.model import INCOMPLETE_NOTE, RUN_KINDS
from agentlens.store.records import IMPORT_SCORER, import_record
from agentlens.visible_text import inline, json_text


@click.group()
def store() -> None:
    """Browse and manage the results store. It holds runs of score, review and import, and
    the trajectories they are about."""


@store.command("import")
@click.argument("paths", nargs=-1, required=True)
@click.option("--run-label", default=None, help="A name for this import run.")
@read_options
@read_store_option
def import_(
    paths: tuple[str, ...], run_label: str | None, lenient: bool, format: str | None,
    labels: tuple[str, ...], store_url: str | None,
) -> int:  # fmt: skip
    """Read traces and keep them in the store. Any supported format; each is kept once."""
    stream = stream_inputs(paths, format=format, lenient=lenient, labels=labels)
    if not stream.count:  # a mistyped path: no empty run, no new store file
        code = report_failures(stream)
        err_console.print("nothing imported: no trajectories read", highlight=False)
        return code or 1
    run = Run(kind="import", scorer=IMPORT_SCORER, label=run_label, settings={"paths": paths})
    # an import is saved as one run when it ends: stopped before, it has saved nothing
    with StopNote(store_url or default_url()).watch(), open_store(store_url) as db:
        run_id = db.save_stream(run, ((t, import_record(t)) for t in stream))
        new = db.new_steps  # not a count before and after: another import may run meanwhile
    console.print(
        f"imported {counted(stream.n_read, 'trajectory')} ({counted(new, 'new step row')}) "
        f"as run {run_id[:12]} in {db.url}",
    )
    return report_failures(stream)


@store.command()
@click.option("--kind", type=click.Choice(RUN_KINDS), default=None, help="Only runs of this kind.")
@click.option("--limit", type=click.IntRange(0, 2**62), default=50, show_default=True,
              help="At most this many runs (0: all).")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="One JSON object per run.")
@read_store_option
def runs(kind: str | None, limit: int, as_json: bool, store_url: str | None) -> int:
    """The stored runs, newest first."""
    with open_store(store_url, create=False) as db:
        found = db.runs(kind=kind, limit=limit)
        stored = len(db.runs(kind=kind)) if limit and len(found) == limit else len(found)
    title = f"{counted(len(found), 'run')} in {db.url}"
    if stored > len(found):  # the default limit is 50: never let a page pass for all of them
        newest = f"the newest {len(found):,} of {counted(stored, 'run')}"
        title = f"{newest} in {db.url} (--limit 0 lists all)"
    if as_json:
        for run in found:
            click.echo(json_text(msgspec.json.encode(run)))
        return 0
    if not found:  # a table of no rows says less than its title alone
        console.print(Text(title))
        return 0
    rows = [
        [run.id[:12], run.kind, run.scorer, inline(run.label or ""),
         f"{run.created:%Y-%m-%d %H:%M}", f"{run.n_records:,}{'' if run.complete else ' (incomplete)'}"]
        for run in found
    ]  # fmt: skip
    headers = ["run", "kind", "scorer", "label", "created", "records"]
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    if sum(widths) + 3 * len(widths) + 1 <= console.width:
        table = Table(title=title)
        for name in headers:
            table.add_column(name, no_wrap=True, justify="right" if name == "records" else "left")
        for row in rows:
            table.add_row(*row)
        console.print(table)
        return 0
    console.print(Text(title))
    kind_width = max(len(run.kind) for run in found) if found else 0
    count_width = max(len(f"{run.n_records:,}") for run in found) if found else 0
    for run in found:
        _print_run_lines(run, kind_width, count_width)
    return 0


def _print_run_lines(run: Run, kind_width: int, count_width: int) -> None:
    """A run as two lines, for terminals too narrow for the table: its id first (to copy into
    `store show`), then scorer and label, indented; each line whole, never split mid-word."""
    records = " " * (count_width - len(f"{run.n_records:,}")) + counted(run.n_records, "record")
    records += "" if run.complete else " (incomplete)"
    first = f"{run.id[:12]}  {run.kind:<{kind_width}}  {run.created:%Y-%m-%d %H:%M}  {records}"
    second = f"  {run.scorer}" + (f" · label {inline(run.label)}" if run.label else "")
    console.print(Text(first))
    console.print(Text(second))


@store.command()
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help="The run and its records as JSON Lines.")
@read_store_option
def show(run_id: str, as_json: bool, store_url: str | None) -> int:
    """One run's records: per trajectory, its metrics (value, label)."""
    with open_store(store_url, create=False) as db:
        run = db.run(run_id)
        records = db.records(run.id)
    if as_json:
        click.echo(json_text(msgspec.json.encode(run)))
        for record in records:
            click.echo(json_text(msgspec.json.encode(record)))
        return 0
    label = f" · label {inline(run.label)}" if run.label else ""
    what = f"{run.kind} · {run.scorer}{label} · {counted(len(records), 'record')}"
    console.print(Text(f"run {run.id} · {what}"))
    if not run.complete:
        console.print(Text(INCOMPLETE_NOTE))
    names = list(dict.fromkeys(m.name for r in records for m in r.metrics if m.step is None))
    if not _fits(records, names, console.width):
        for record in records:
            cells = [f"{n} {c}" for n in names if (c := _cell(record.metric(n)))]
            lines = _fill(cells, console.width - 2)
            head = inline(f"{record.trajectory_id}  {record.outcome!s}")
            console.print(Text(head))
            for line in lines:
                console.print(Text("  " + line))
        return 0
    table = Table()
    for name in ("trajectory", "outcome", *names):
        table.add_column(name, overflow="fold")
    for record in records:
        outcome = inline(record.outcome or "")
        values = [_cell(record.metric(n)) for n in names]
        table.add_row(inline(record.trajectory_id), outcome, *values)
    console.print(table)
    return 0


@store.command()
@click.argument("digest")
@click.option("-o", "--out", type=click.Path(dir_okay=False), default=None,
              help="Write here (its folder is created).")  # fmt: skip
@read_store_option
def trajectory(digest: str, out: str | None, store_url: str | None) -> int:
    """Write one stored trajectory as canonical JSONL. The same as `agentlens convert --to
    jsonl` writes.
    DIGEST is a digest, a unique prefix of one, or a trajectory id as `store show` prints it."""
    with open_store(store_url, create=False) as db:
        found = db.trajectory(db.find_trajectory(digest))
    if out:
        write_whole(Path(out), lambda file: dump_jsonl([found], file), store=db.url)
        # on stderr: `-o /dev/stdout` keeps stdout for the trajectory alone
        steps = counted(len(found.steps), "step")
        err_console.print(Text(f"wrote trajectory {inline(found.id)} ({steps}) to {inline(out)}"))
    else:  # to a terminal, perhaps: its C1 controls and bidi overrides escaped
        document = io.BytesIO()
        dump_jsonl([found], document)
        sys.stdout.write(json_text(document.getvalue()))
    return 0


@store.command()
@click.argument("run_id")
@read_store_option
def rm(run_id: str, store_url: str | None) -> int:
    """Delete a run and its records (its trajectories stay)."""
    with open_store(store_url, create=False) as db:
        run = db.run(run_id)
        db.delete_run(run.id)
    console.print(
        Text(f"deleted run {run.id[:12]} ({run.kind}, {counted(run.n_records, 'record')})")
    )
    return 0


@store.command()
@read_store_option
def info(store_url: str | None) -> int:
    """Where the store is, its schema version and row counts."""
    with open_store(store_url, create=False) as db:
        stats = db.stats()
        version = db.schema_version
    saved = stats["steps_referenced"] - stats["steps"]
    # the default's path only where it is the one shown: beside another it read as the one used
    which = "; the default store" if db.url == printable_url(default_url()) else ""
    console.print(
        f"{db.url} (schema {version}{which})\n"
        f"{counted(stats['runs'], 'run')}, {counted(stats['records'], 'record')}, "
        f"{counted(stats['metrics'], 'metric')}\n"
        f"{counted(stats['trajectories'], 'trajectory')}, {counted(stats['steps'], 'step row')} "
        f"({counted(saved, 'shared step')} kept once)",
    )
    return 0


def _cell(metric: object) -> str:
    if not isinstance(metric, Metric):
        return ""
    label = None if metric.label is None else inline(metric.label)
    if metric.value is None:
        return label or "-"
    # counts (steps, tokens) whole and grouped, not 1.039e+05
    value = f"{metric.value:,.0f}" if float(metric.value).is_integer() else f"{metric.value:.4g}"
    return f"{value} {label}" if label and metric.name != "score" else value


def _fits(records: list[Any], names: list[str], width: int) -> bool:
    """Whether the one-row-per-record table fits `width` with no cell folded: each column as
    wide as its longest cell or header, plus 3 characters of border and padding per column."""
    columns = [[r.trajectory_id for r in records], [r.outcome or "" for r in records]]
    columns += [[_cell(r.metric(n)) for r in records] for n in names]
    headers = ["trajectory", "outcome", *names]
    needed = (
        sum(max([len(h), *map(len, cells)]) + 3 for h, cells in zip(headers, columns, strict=True))
        + 1
    )
    return needed <= width


def _fill(cells: list[str], width: int) -> list[str]:
    """Cells ("name value") on lines of at most `width` characters, never split inside one."""
    lines: list[str] = []
    for cell in cells:
        if lines and len(lines[-1]) + 2 + len(cell) <= width:
            lines[-1] += "  " + cell
        else:
            lines.append(cell)
    return lines
