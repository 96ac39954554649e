"""Multi-SWE-bench harness reports (github.com/multi-swe-bench/multi-swe-bench, `harness/`).

The harness names an instance `<org>/<repo>:pr-<number>`; datasets, predictions and agents' trace
files call it `<org>__<repo>-<number>` (`apache__dubbo-10638`). Its two reports:

* the run's `final_report.json` in the evaluation `output_dir` (`FinalReport`: `resolved_ids`,
  `unresolved_ids`, `incomplete_ids`, `empty_patch_ids`, `error_ids` of harness ids), read by the
  SWE-bench bucket parser once its ids are renamed here;
* an instance's `report.json` (`<workdir>/<org>/<repo>/instances/pr-<n>/report.json`, `Report`:
  `org`, `repo`, `number`, `valid`), where `valid` is the verdict (the fix made a failing test pass
  and broke none).

The experiments repository's `evaluation/<lang>/<split>/<run>/results/results.json` already uses
dataset ids and is read as a SWE-bench `results.json`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agentlens.errors import ConfigError
from agentlens.redaction import masked_head
from agentlens.trajectory import Outcome, OutcomeStatus

REPORT_NAME = "final_report.json"
HARNESS_ID = re.compile(r"^(?P<org>[^/\s]+)/(?P<repo>[^/:\s]+):pr-(?P<number>\d+)$")


def dataset_id(task: str) -> str:
    """`org/repo:pr-12` -> `org__repo-12`; any other id is returned as it is."""
    found = HARNESS_ID.match(task)
    return f"{found['org']}__{found['repo']}-{found['number']}" if found else task


def is_instance_report(doc: dict[str, Any]) -> bool:
    return {"org", "repo", "number", "valid"} <= doc.keys() and "fix_patch_result" in doc


def instance_outcome(path: Path, doc: dict[str, Any]) -> tuple[str, Outcome]:
    """(dataset id, outcome) of one instance `report.json`."""
    valid = doc["valid"]
    if not isinstance(valid, bool):
        raise ConfigError(f"{path}: 'valid' must be true or false, not {valid!r:.40}")
    status: OutcomeStatus = "passed" if valid else "failed"
    task = f"{doc['org']}__{doc['repo']}-{doc['number']}"
    reason = "" if valid else f": {masked_head(str(doc.get('error_msg') or 'not valid'), 120)}"
    return task, Outcome(status=status, source="multi-swe-bench", detail=f"{path} (valid{reason})")
