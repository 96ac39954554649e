"""`agentlens report [RUN_ID…] -o report.html`: stored runs as one self-contained HTML file."""

from __future__ import annotations

from pathlib import Path

import click

from agentlens.cli._app import console, err_console
from agentlens.cli._output import write_whole
from agentlens.cli._store_option import read_store_option
from agentlens.list_text import counted
from agentlens.report import render_report, select_runs
from agentlens.store import default_url, open_store
from agentlens.store.model import RUN_KINDS


@click.command()
@click.argument("run_ids", nargs=-1)
@click.option(
    "-o", "--out", type=click.Path(dir_okay=False), default="report.html", show_default=True,
    help="The HTML file to write (its folder is created).",
)  # fmt: skip
@click.option("--kind", type=click.Choice(RUN_KINDS), default=None,
              help="Every run of this kind (instead of run ids).")  # fmt: skip
@click.option("--label", default=None, help="Every run whose label matches (a glob: 'django*').")
@read_store_option
def report(
    run_ids: tuple[str, ...], out: str, kind: str | None, label: str | None, store_url: str | None
) -> int:
    """Write an HTML report of stored runs. No run id: the newest score run. No JavaScript,
    nothing loaded from elsewhere; every text from the traces is escaped."""
    url = store_url or default_url()
    with open_store(url, create=False) as store:
        runs, note = select_runs(store, run_ids, kind=kind, label=label)
        if note:
            err_console.print(note, highlight=False, markup=False)
        document = render_report(store, [run.id for run in runs])
    path = Path(out)
    write_whole(path, lambda file: file.write(document.encode("utf-8")), store=store.url)
    console.print(f"wrote {path} ({counted(len(runs), 'run')})")
    return 0
