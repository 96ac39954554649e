"""The two `--store URL` options. `store_option`: also keep a command's results in the results
store, only when given (no fallback to `$AGENTLENS_STORE`). `read_store_option`: the store a
command reads (`agentlens store …`, `view`, `report`, `compare store:RUN`), which falls back to
`$AGENTLENS_STORE`, then the user's store."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import click

from agentlens.cli._app import err_console, stop_said
from agentlens.list_text import counted

if TYPE_CHECKING:
    from agentlens.process.run_units import CohortRun
    from agentlens.store import Record, Run
    from agentlens.store.sql import SqlStore
    from agentlens.trajectory import Trajectory

F = TypeVar("F", bound=Callable[..., Any])
STOPS = (KeyboardInterrupt, SystemExit)  # Ctrl-C; SIGTERM or SIGHUP (`stop_signals`)


def store_option(command: F) -> F:
    return click.option(
        "--store",
        "store_url",
        default=None,
        metavar="URL",
        help="Also save the results in this store: a SQLite file or postgresql://… "
        "(`agentlens store` lists them).",
    )(command)


def read_store_option(command: F) -> F:
    return click.option(
        "--store",
        "store_url",
        default=None,
        metavar="URL",
        help="SQLite file or postgresql://… (default: $AGENTLENS_STORE, else "
        "~/.local/share/agentlens/agentlens.db).",
    )(command)


def label_option(command: F) -> F:
    return click.option("--run-label", default=None, help="A name for the stored run.")(command)


def save_run(
    url: str | None, run: Run, trajectories: Sequence[Trajectory], records: Sequence[Record]
) -> None:
    """Save one run and say where; the caller's results are printed whatever happens here."""
    if not url:
        return
    from agentlens.store import open_store

    with open_store(url) as store:
        run_id = store.save(run, trajectories, records)
        err_console.print(
            f"stored {counted(len(records), 'record')} as run {run_id[:12]} in {store.url}",
            highlight=False,
            markup=False,
        )


def run_key(
    settings: dict[str, Any], trajectories: Sequence[CohortRun], label: str | None = None
) -> str:
    """A run id from what makes the run (settings, `--run-label`, and each run's file, record and
    id): the same command on the same runs saves under the same id, which `SqlStore.save_part`
    resumes; another label is another run, not a silent resume that keeps the first label.
    No label: the id is what it was before labels counted, so older runs still resume."""
    import hashlib

    import orjson

    runs = sorted(f"{t.source.path}#{t.source.index}:{t.id}" for t in trajectories)
    named = settings if label is None else {**settings, "run_label": label}
    key = orjson.dumps([named, runs], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(key).hexdigest()[:32]


class StopNote:
    """The line a `--store` command says once when Ctrl-C or a stop signal ends it: what its run
    holds so far and how to resume it (stopped while `saving` a part), else that no run was
    saved (stopped anywhere else it `watch`es: reading, scoring). Said, the stop goes on as
    `StopSaid`, so no `interrupted` follows it."""

    def __init__(self, url: str | None) -> None:
        self.url = url
        self.said = False

    @contextmanager
    def watch(self) -> Iterator[None]:
        try:
            yield
        except STOPS as exc:
            if not self.url or self.said:
                raise
            say_nothing_stored(self.url)
            raise stop_said(exc) from None

    @contextmanager
    def saving(self, store: SqlStore, run_id: str) -> Iterator[None]:
        try:
            yield
        except STOPS as exc:
            say_stopped(store, run_id)
            self.said = True
            raise stop_said(exc) from None


def say_stopped(store: SqlStore, run_id: str) -> None:
    """The stop line of a command that saves its run in parts (`cohort --store`, `score
    --store`): what the run holds so far, and that the same command resumes it (`run_key`: the
    same paths and options make the same run id, and `save_part` adds only the records it does
    not hold)."""
    from agentlens.errors import StoreError

    try:
        held = store.run(run_id).n_records
    except StoreError:  # no part saved: the run was never made
        held = 0
    if not held:
        say_nothing_stored(store.url)
        return
    err_console.print(
        f"stopped: run {run_id[:12]} in {store.url} holds {counted(held, 'record')} so far "
        "(incomplete); run the same command again (same paths and options) to resume it: the "
        "stored records are kept and the rest added",
        highlight=False,
        markup=False,
    )


def say_nothing_stored(url: str) -> None:
    """The stop line of a command stopped before it saved its run, or any part of it."""
    from agentlens.store import printable_url

    err_console.print(
        f"stopped before this command saved anything in {printable_url(url)}; run it again to "
        "save its run",
        highlight=False,
        markup=False,
    )
