"""The two `--store URL` options. `store_option`: also keep a command's results in the results
store, only when given (no fallback to `$AGENTLENS_STORE`). `read_store_option`: the store a
command reads (`agentlens store …`, `view`, `report`, `compare store:RUN`), which falls back to
`$AGENTLENS_STORE`, then the user's store."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from agentlens.cli._app import err_console

if TYPE_CHECKING:
    from agentlens.process.run_units import CohortRun
    from agentlens.store import Record, Run
    from agentlens.trajectory import Trajectory

F = TypeVar("F", bound=Callable[..., Any])


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
            f"stored {len(records)} records as run {run_id[:12]} in {store.url}",
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
