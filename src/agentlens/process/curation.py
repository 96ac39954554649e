"""Curation: choose passing runs worth keeping (e.g. as fine-tuning data) by process quality.

Selections work on cohort rows (see `cohort`): `top_k` keeps the k best-scoring passing runs,
`drop_lucky` keeps every passing run that is not Lucky. `curation_table` reproduces the release's
curation statistics (spec §13.7): passing rows sorted by descending score, Ideal/Lucky counted by
score (≥ `ideal_min` / < `lucky_below`), "min score" = the last row's score.
"""

from __future__ import annotations

import csv
import importlib.util
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

from agentlens.errors import ConfigError, MissingDependencyError
from agentlens.process.cohort_rows import Row, passed, signal
from agentlens.process.profiles import ProfileConfig, get_profile
from agentlens.spreadsheet_text import inert_cell

FORMATS = ("jsonl", "csv", "parquet")


def ranked_passing(rows: Sequence[Row]) -> list[Row]:
    """Passing rows by descending composite; ties by trajectory id, so selections are stable."""
    keep = [r for r in rows if passed(r)]
    return sorted(keep, key=lambda r: (-signal(r, "composite"), str(r.get("trajectory_id"))))


def top_k(rows: Sequence[Row], k: int) -> list[Row]:
    return ranked_passing(rows)[:k]


def drop_lucky(rows: Sequence[Row]) -> list[Row]:
    return [r for r in ranked_passing(rows) if r.get("quality_tier") != "lucky"]


def select(rows: Sequence[Row], selection: str) -> list[Row]:
    """`all`, `drop-lucky` or `top-<k>` (e.g. `top-50`)."""
    if check_selection(selection) == "all":
        return ranked_passing(rows)
    if selection == "drop-lucky":
        return drop_lucky(rows)
    return top_k(rows, int(selection[4:]))


def check_selection(selection: str) -> str:
    """`selection` if `select` takes it, else a usage error."""
    if selection in ("all", "drop-lucky") or (
        selection.startswith("top-") and selection[4:].isdigit()
    ):
        return selection
    raise ConfigError(f"unknown selection {selection!r}; use all, drop-lucky or top-<k>")


@dataclass(frozen=True)
class CurationRow:
    selection: str
    n: int
    ideal_percent: float
    lucky_percent: float
    mean_coherence: float
    mean_score: float
    min_score: float


def curation_row(name: str, rows: Sequence[Row], config: ProfileConfig) -> CurationRow:
    scores = [signal(r, "composite") for r in rows]
    n = len(rows)
    if n == 0:
        nan = float("nan")
        return CurationRow(name, 0, nan, nan, nan, nan, nan)
    return CurationRow(
        selection=name,
        n=n,
        ideal_percent=100.0 * sum(s >= config.ideal_min for s in scores) / n,
        lucky_percent=100.0 * sum(s < config.lucky_below for s in scores) / n,
        mean_coherence=sum(signal(r, "coh") for r in rows) / n,
        mean_score=sum(scores) / n,
        min_score=scores[-1],
    )


def curation_table(
    rows: Sequence[Row],
    selections: Sequence[str] = ("all", "drop-lucky", "top-50", "top-25"),
    profile: str | ProfileConfig = "sdk-compat",
) -> list[CurationRow]:
    config = get_profile(profile)
    return [curation_row(name, select(rows, name), config) for name in selections]


def export_format(out: Path, fmt: str | None = None) -> str:
    """`fmt`, else the suffix of `out`, if `export_rows` writes it here; else a usage error,
    which a command says before its scoring rather than after it (Parquet needs pyarrow)."""
    kind = fmt or out.suffix.lstrip(".").lower()
    if kind not in FORMATS:
        raise ConfigError(f"{out}: unknown export format {kind!r}; use one of {FORMATS}")
    if kind == "parquet" and importlib.util.find_spec("pyarrow") is None:
        raise MissingDependencyError("Parquet export", "parquet", "pyarrow")
    return kind


def check_writable(out: Path) -> None:
    """A usage error now when `export_rows` could not write `out` (its folder is a file, or
    read-only), rather than after a long scoring; nothing is created."""
    if out.exists():  # a folder is click's usage error already
        if not os.access(out, os.W_OK):
            raise ConfigError(f"{out}: cannot be written (permission denied or read-only)")
        return
    folder = next(p for p in out.absolute().parents if p.exists())  # the root exists
    if not folder.is_dir():
        raise ConfigError(f"{out}: cannot be written: {folder} is a file, not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ConfigError(f"{out}: cannot be written: {folder} is read-only")


def export_rows(rows: Sequence[Row], path: str | Path, fmt: str | None = None) -> Path:
    """Write rows as JSON Lines, CSV or Parquet (format from `fmt` or the file suffix)."""
    out = Path(path)
    kind = export_format(out, fmt)
    out.parent.mkdir(parents=True, exist_ok=True)
    if kind == "jsonl":
        with out.open("wb") as fh:  # a line at a time: `rows` may be read from a file
            for row in rows:
                fh.write(orjson.dumps(dict(row)) + b"\n")
    elif kind == "csv":
        with out.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=_columns(rows), extrasaction="ignore")
            writer.writeheader()
            writer.writerows({k: inert_cell(v) for k, v in row.items()} for row in rows)
    else:
        _write_parquet(rows, _columns(rows), out)
    return out


def _columns(rows: Sequence[Row]) -> list[str]:
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    return list(columns)


def _write_parquet(rows: Sequence[Row], columns: list[str], out: Path) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingDependencyError("Parquet export", "parquet", "pyarrow") from None
    table = pa.Table.from_pylist([{c: r.get(c) for c in columns} for r in rows])
    pq.write_table(table, out)
