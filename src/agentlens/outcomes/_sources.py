"""Parsers for outcome sidecars. Each returns a `LabelTable`: keys (task ids, trajectory ids or
file paths) -> `Outcome`, with `Outcome.source` naming the kind of sidecar and `detail` the file."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson

from agentlens.bounded_read import read_regular
from agentlens.errors import ConfigError
from agentlens.outcomes._multi_swe_bench import dataset_id, instance_outcome, is_instance_report
from agentlens.trajectory import Outcome, OutcomeStatus

RESULT_LINE = re.compile(rb"Result for (\S+): resolved: (True|False)")
TRUE = {"pass", "passed", "true", "1", "yes", "resolved", "success", "c"}
FALSE = {"fail", "failed", "false", "0", "no", "unresolved", "failure", "i"}
# SWE-bench harness buckets. An instance in an "unevaluated" bucket was never run through the
# tests (no patch, an interrupted run: see the broken gpt-4o-mini results.json, trace-formats.md
# §1.1): it is `unknown` unless the user asks `--unevaluated failed`.
PASSED_KEYS = ("resolved_ids", "resolved")
FAILED_KEYS = ("unresolved_ids", "error_ids", "failed_ids")
UNEVALUATED_KEYS = ("incomplete_ids", "empty_patch_ids", "pending_ids")
UNEVALUATED = "not evaluated"
"""Marks an outcome's `detail` when the report never evaluated the instance."""
Unevaluated = Literal["unknown", "failed"]
PATH_COLUMNS = ("local_path", "path", "trajectory_path", "file", "trajectory")
ID_COLUMNS = ("trajectory_id", "id", "instance_id", "task_id")
LABEL_COLUMNS = ("label", "passed", "resolved", "outcome", "status", "success")


@dataclass
class LabelTable:
    """Labels by task/trajectory id and by (relative) trajectory path."""

    by_id: dict[str, Outcome] = field(default_factory=dict)
    by_path: dict[str, Outcome] = field(default_factory=dict)
    _by_name: tuple[int, dict[str, list[str]]] = field(default=(-1, {}), repr=False)

    def __len__(self) -> int:
        return len(self.by_id) + len(self.by_path)

    def path_keys_named(self, name: str) -> list[str]:
        """The `by_path` keys whose last component is `name`: only they can match a file of that
        name, so matching a trajectory does not scan every key (a batch would be quadratic)."""
        count, index = self._by_name
        if count != len(self.by_path):  # rows were added since the index was built
            index = {}
            for key in self.by_path:
                parts = [part for part in key.split("/") if part and part != "."]
                if parts:
                    index.setdefault(parts[-1], []).append(key)
            self._by_name = (len(self.by_path), index)
        return index.get(name, [])


def parse_status(value: Any) -> OutcomeStatus | None:
    """'pass'/'True'/1/'resolved' -> passed, 'fail'/'False'/0 -> failed, anything else -> None."""
    text = str(value).strip().lower()
    if text in TRUE:
        return "passed"
    if text in FALSE:
        return "failed"
    return None


def read_run_instance_log(path: Path) -> LabelTable:
    """SWE-bench `run_instance.log`: the last `Result for <task>: resolved: True|False` line."""
    table = LabelTable()
    try:
        found = RESULT_LINE.findall(_bounded_bytes(path))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read labels ({exc.strerror or exc})") from exc
    if found:
        task, verdict = found[-1]
        status: OutcomeStatus = "passed" if verdict == b"True" else "failed"
        # a task id that is not UTF-8 matches no trajectory, but must not stop the run
        table.by_id[task.decode(errors="replace")] = Outcome(
            status=status, source="run_instance.log", detail=str(path)
        )
    return table


def read_logs_dir(root: Path, unevaluated: Unevaluated = "unknown") -> LabelTable:
    """Every `run_instance.log` (and per-instance `report.json`) under a logs directory."""
    table = LabelTable()
    for log in sorted(root.rglob("report.json")):
        table.by_id.update(read_report(log, unevaluated).by_id)
    for log in sorted(root.rglob("run_instance.log")):
        table.by_id.update(read_run_instance_log(log).by_id)
    return table


def read_report(path: Path, unevaluated: Unevaluated = "unknown") -> LabelTable:
    """SWE-bench `results.json`, an sb-cli report, the harness summary `<model>.<run_id>.json`,
    a per-instance harness `report.json`, or a Multi-SWE-bench report (`_multi_swe_bench`).
    `unevaluated` is the status of the instances a
    summary lists as never evaluated (`incomplete_ids`, `empty_patch_ids`, `pending_ids`)."""
    doc = _json(path)
    if not isinstance(doc, dict):
        raise ConfigError(f"{path}: not a SWE-bench report (expected a JSON object)")
    if isinstance(doc.get("resolved"), bool):  # flat per-instance report: logs/<task>/report.json
        return _single_report(path, path.parent.name, doc)
    if is_instance_report(doc):
        task, outcome = instance_outcome(path, doc)
        return LabelTable(by_id={task: outcome})
    nested = {k: v for k, v in doc.items() if isinstance(v, dict) and "resolved" in v}
    if nested:  # harness report {instance_id: {resolved: bool, ...}}
        table = LabelTable()
        for task, entry in nested.items():
            table.by_id.update(_single_report(path, task, entry).by_id)
        return table
    return _bucket_report(path, doc, unevaluated)


def _single_report(path: Path, task: str, doc: dict[str, Any]) -> LabelTable:
    if not isinstance(doc["resolved"], bool):  # "false" or null must not read as a verdict
        raise ConfigError(
            f"{path}: {task}: 'resolved' must be true or false, not {doc['resolved']!r:.40}"
        )
    status: OutcomeStatus = "passed" if doc["resolved"] else "failed"
    return LabelTable(by_id={task: Outcome(status=status, source="report.json", detail=str(path))})


def _bucket_report(path: Path, doc: dict[str, Any], unevaluated: Unevaluated) -> LabelTable:
    kind = _bucket_kind(doc)
    if not any(isinstance(doc.get(k), list) for k in PASSED_KEYS + FAILED_KEYS):
        raise ConfigError(
            f"{path}: not a SWE-bench report (no resolved / unresolved_ids lists found)"
        )
    table = LabelTable()
    buckets = ((UNEVALUATED_KEYS, unevaluated), (FAILED_KEYS, "failed"), (PASSED_KEYS, "passed"))
    for keys, status in buckets:  # a later bucket wins an id listed twice
        for key in keys:
            tasks = doc.get(key)
            note = f": {UNEVALUATED}" if key in UNEVALUATED_KEYS else ""
            for task in tasks if isinstance(tasks, list) else []:
                if not isinstance(task, str | int):  # ids are strings; a nested value is no id
                    continue
                table.by_id[dataset_id(str(task))] = Outcome(
                    status=status,  # type: ignore[arg-type]
                    source=kind,
                    detail=f"{path} ({key}{note})",
                )
    return table


def _bucket_kind(doc: dict[str, Any]) -> str:
    """`swebench-summary`: the harness's `<model>.<run_id>.json` (it counts empty patches);
    `sb-cli-report`: sb-cli's; `results.json`: the older harness and multi-swe-bench's."""
    if "schema_version" in doc and "empty_patch_ids" in doc:
        return "swebench-summary"
    return "sb-cli-report" if "schema_version" in doc or "resolved_ids" in doc else "results.json"


def read_csv(path: Path) -> LabelTable:
    """A CSV with a label column (`label`, `passed`, ...) and a path or id column."""
    try:
        return _read_csv(path)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ConfigError(f"{path}: cannot read labels ({exc})") from exc


def _read_csv(path: Path) -> LabelTable:
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        columns = list(reader.fieldnames or [])
        if twice := sorted({c for c in columns if columns.count(c) > 1}):
            raise ConfigError(f"{path}: column {twice[0]!r} given twice in the header")
        label_col = _pick(columns, LABEL_COLUMNS)
        path_col = _pick(columns, PATH_COLUMNS)
        id_col = _pick(columns, ID_COLUMNS)
        if label_col is None or (path_col is None and id_col is None):
            raise ConfigError(
                f"{path}: a label CSV needs a label column ({', '.join(LABEL_COLUMNS)}) and a "
                f"path or id column ({', '.join(PATH_COLUMNS + ID_COLUMNS)}); found {columns}"
            )
        table = LabelTable()
        for number, row in enumerate(reader, start=2):
            status = parse_status(row.get(label_col))
            if status is None:
                continue
            outcome = Outcome(status=status, source="csv", detail=f"{path}:{number}")
            if path_col and row.get(path_col):
                table.by_path[row[path_col].replace("\\", "/")] = outcome
            elif id_col and row.get(id_col):
                table.by_id[row[id_col]] = outcome
    return table


def _pick(columns: list[str], wanted: tuple[str, ...]) -> str | None:
    lower = {c.lower().strip(): c for c in columns}
    return next((lower[w] for w in wanted if w in lower), None)


def _json(path: Path) -> Any:
    try:
        return orjson.loads(_bounded_bytes(path))
    except (OSError, orjson.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read labels ({exc})") from exc


SIDECAR_MAX_BYTES = 256 << 20
"""A report or log of one run's outcomes is kilobytes to a few megabytes (SWE-bench's summary of
2,294 tasks: under 1 MB); one found beside a trace is the trace folder's, so hostile: larger,
it is not read (a sparse 600 MB `sb-cli-report.json` used to take 1.2 GB of memory, whatever
`--max-file-size` said)."""


def _bounded_bytes(path: Path) -> bytes:
    """The file's bytes, at most `SIDECAR_MAX_BYTES`; never waited for (a FIFO named like a
    report). Raises `OSError` (which callers report) otherwise."""
    return read_regular(path, SIDECAR_MAX_BYTES, f"over {SIDECAR_MAX_BYTES >> 20} MiB, not read")
