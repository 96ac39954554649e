"""Which runs a report shows: the ids given, else the runs matching `--kind` / `--label`, else
the newest score run (and a note saying so)."""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase

from agentlens.errors import ConfigError, StoreError
from agentlens.store import Run, SqlStore


def select_runs(
    store: SqlStore, run_ids: Sequence[str], *, kind: str | None = None, label: str | None = None
) -> tuple[list[Run], str | None]:
    """(runs, a note for the user when the choice was made for them)."""
    if run_ids and (kind or label):
        raise ConfigError("give run ids or --kind/--label, not both")
    if run_ids:
        return [store.run(run_id) for run_id in run_ids], None
    if kind or label:
        found = [r for r in store.runs(kind=kind) if label is None or _matches(r, label)]
        if not found:
            raise StoreError(store.url, f"no runs match {_filters(kind, label)}")
        return found, None
    newest = store.runs(kind="score", limit=1)
    if not newest:
        raise StoreError(
            store.url,
            "no score runs: give a run id (`agentlens store runs` lists them) "
            "or save one with `agentlens score … --store`",
        )
    name = f" ({newest[0].label})" if newest[0].label else ""
    return newest, f"no run id given: reporting the newest score run, {newest[0].id[:12]}{name}"


def _matches(run: Run, pattern: str) -> bool:
    return run.label is not None and fnmatchcase(run.label, pattern)


def _filters(kind: str | None, label: str | None) -> str:
    parts = ([f"--kind {kind}"] if kind else []) + ([f"--label {label!r}"] if label else [])
    return " ".join(parts)
