"""Cohort rows: the 40 AgentLens-Bench annotation columns of one scored run, from the release's
CSV (`read_annotation_rows`) or from a `ProcessResult` (`result_row`, which adds the profile's own
signals `struct`/`cov`/`coh`/`temp`, `composite`, `profile` and `mechanism`)."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from agentlens.bounded_read import read_named
from agentlens.errors import ConfigError, MissingDependencyError
from agentlens.process.waste import WASTE_KINDS
from agentlens.spreadsheet_text import restored_cell

if TYPE_CHECKING:
    from agentlens.process.result import ProcessResult

Row = Mapping[str, object]
# The profile's own signals; release rows fall back to the released component columns.
SIGNALS = {
    "struct": "f1_score",
    "cov": "coverage_percent",
    "coh": "coherence_score",
    "temp": "temporal_profile_score",
}
INTS = {
    "n_states",
    "divergence_step",
    "total_wasted_steps",
    "wasted_input_tokens",
    "wasted_output_tokens",
    "tokens",
    "truncated_at_line",
} | {f"{k}_{s}" for k in WASTE_KINDS for s in ("count", "waste")}
TEXT = {
    "task_id",
    "model",
    "trajectory_id",
    "quality_tier",
    "verdict",
    "failure_reasons",
    "strengths",
    "mechanism",
    "profile",
    "outcome",
}


REQUIRED = ("trajectory_id", "quality_tier", "passed")


def read_annotation_rows(path: str | Path) -> list[dict[str, object]]:
    """Rows of an annotation CSV (the release's or ours), with numbers and booleans parsed; a file
    that is not one is a one-line `ConfigError` naming the file, line and column."""
    try:
        text = read_named(path).decode("utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not an annotation CSV ({exc})") from None
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise ConfigError(f"{path}: not an annotation CSV: no column {missing[0]!r}")
        return [_typed(row, path, reader.line_num) for row in reader]
    except csv.Error as exc:
        raise ConfigError(f"{path}: not an annotation CSV ({exc})") from None


def _typed(row: Mapping[str, str], path: str | Path, line: int) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, text in row.items():
        if key is None or not isinstance(text, str):  # a row longer or shorter than the header
            raise ConfigError(f"{path}: line {line}: {len(row)} fields do not match the header")
        if key in TEXT or text == "":
            out[key] = restored_cell(text) or None
        elif text in ("True", "False"):
            out[key] = text == "True"
        else:
            out[key] = _number(text, key in INTS, f"{path}: line {line}: column {key!r}")
    return out


def _number(text: str, integer: bool, where: str) -> float | int:
    try:
        value = float(text)
        return int(value) if integer else value
    except (ValueError, OverflowError):
        raise ConfigError(f"{where} should be a number, found {text!r:.40}") from None


def result_row(result: ProcessResult) -> dict[str, object]:
    """The 40 columns plus the profile's signals, composite, Lucky-Pass mechanism, the
    run's tokens (Σ prompt + completion over tool calls) and the line its trace was cut at
    (`truncated_at_line`, None for a whole trace)."""
    row = result.annotation_row()
    row |= {name: result.signals[name].value for name in SIGNALS}
    row |= {"composite": result.score, "profile": result.profile, "mechanism": None}
    row["outcome"] = result.outcome
    row["outcome_term"] = result.outcome_term
    row["tokens"] = result.tokens
    row["truncated_at_line"] = result.truncated_at_line
    if result.mechanism is not None:
        row["mechanism"] = result.mechanism[0]
    return row


def signal(row: Row, name: str) -> float:
    """A named signal of a row; `process_only` is the composite without the release's outcome
    term (`sdk-compat` adds +10 to every passing run's score, spec §8.2)."""
    if name == "process_only":
        leak = row.get("outcome_term")  # scored rows; the release's rows: +10 for a pass
        if leak is None:
            leak = 10.0 if passed(row) and row.get("profile", "sdk-compat") == "sdk-compat" else 0.0
        return signal(row, "composite") - float(leak)  # type: ignore[arg-type]
    value = row.get(name)
    if value is None and name in SIGNALS:
        value = row.get(SIGNALS[name])
    if value is None and name == "composite":
        value = row.get("quality_score")
    return float(value)  # type: ignore[arg-type]


def passed(row: Row) -> bool:
    return bool(row.get("passed"))


def failed(row: Row) -> bool:
    """A recorded failure: scored rows carry `outcome` (an unknown one is neither passed nor
    failed); the release's CSV rows only `passed`."""
    outcome = row.get("outcome")
    return outcome == "failed" if outcome is not None else not passed(row)


def read_score_rows(path: str) -> list[dict[str, object]]:
    """The rows `agentlens cohort --out` wrote: JSON Lines, CSV or Parquet, by suffix."""
    suffix = Path(path).suffix.lower()  # as `curation.export_format` judges what it writes
    if suffix == ".csv":
        return read_annotation_rows(path)
    if suffix == ".parquet":
        return _parquet_rows(path)
    try:
        lines = read_named(path).splitlines()
        rows = [orjson.loads(line) for line in lines if line.strip()]
    except (OSError, orjson.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not JSON Lines rows ({exc})") from None
    if not all(isinstance(r, dict) and "trajectory_id" in r for r in rows):
        raise ConfigError(f"{path}: every row needs a trajectory_id (cohort --out rows)")
    return rows


def read_cohort_rows(path: str) -> list[dict[str, object]]:
    """Rows for the cohort tables (`cohort --rows`): the release's CSV, or what `cohort --out`
    wrote in any of its formats (by suffix; anything else is read as CSV, as before); each row
    needs the columns the tables judge it by."""
    if Path(path).suffix.lower() not in (".jsonl", ".parquet"):
        return read_annotation_rows(path)
    rows = read_score_rows(path)
    for line, row in enumerate(rows, 1):
        missing = [column for column in REQUIRED if column not in row]
        if missing:
            raise ConfigError(f"{path}: line {line}: no {missing[0]!r} (cohort --out rows)")
    return rows


def _parquet_rows(path: str) -> list[dict[str, object]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingDependencyError("Parquet rows", "parquet", "pyarrow") from None
    try:
        rows: list[dict[str, object]] = pq.read_table(path).to_pylist()
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise ConfigError(f"{path}: not Parquet rows ({exc})") from None
    if not all("trajectory_id" in r for r in rows):
        raise ConfigError(f"{path}: every row needs a trajectory_id (cohort --out rows)")
    return rows
