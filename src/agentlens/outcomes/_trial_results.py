"""Trial result files of Harbor and Terminal-Bench: one verdict for everything in the trial folder.

* Harbor (`harbor run`): `<job>/<trial>/result.json`, the verdict `verifier_result.rewards.reward`
  (1 passes, as Harbor counts it), the agent's logs under `<trial>/agent/`;
* Terminal-Bench 1 (`tb run`): `<run>/<task>/<trial>/results.json` with `is_resolved` (null when
  the tests never ran: `failure_mode` says why), the agent's logs under `<trial>/agent-logs/` or
  `<trial>/sessions/`.

A trial folder holds one attempt, so the file labels every trace below it, whatever its id; the
nearest trial folder above a trace wins.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from agentlens.bounded_read import read_regular
from agentlens.outcomes._sources import UNEVALUATED, LabelTable
from agentlens.trajectory import Outcome, OutcomeStatus

TRIAL_MAX_BYTES = 1 << 20
HARBOR = "result.json"
TERMINAL_BENCH = "results.json"


def trial_outcome(folder: Path) -> Outcome | None:
    """The verdict of the trial whose folder is `folder`, or None when it is not a trial."""
    return next(filter(None, (_read(folder / name)[0] for name in (HARBOR, TERMINAL_BENCH))), None)


def trial_labels(path: Path) -> LabelTable | None:
    """A trial file named by `--labels`: its verdict by trial name and task id."""
    outcome, doc = _read(path)
    if outcome is None:
        return None
    keys = (doc.get(k) for k in ("trial_name", "task_name", "task_id"))
    return LabelTable(by_id={key: outcome for key in keys if isinstance(key, str) and key})


def _read(path: Path) -> tuple[Outcome | None, dict[str, Any]]:
    parse = {HARBOR: _harbor, TERMINAL_BENCH: _terminal_bench}.get(path.name)
    doc = _object(path) if parse else None
    found = parse(doc) if parse and doc is not None else None
    if found is None or doc is None:
        return None, {}
    status, why = found
    return Outcome(status=status, source=f"trial-{path.name}", detail=f"{path} ({why})"), doc


def _harbor(doc: dict[str, Any]) -> tuple[OutcomeStatus, str] | None:
    if "task_name" not in doc or "verifier_result" not in doc:
        return None
    verifier = doc["verifier_result"]
    rewards = verifier.get("rewards") if isinstance(verifier, dict) else None
    reward = rewards.get("reward") if isinstance(rewards, dict) else None
    try:
        passed = float(reward) >= 1.0  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return "unknown", f"verifier_result.rewards.reward = {reward!r:.40}: {UNEVALUATED}"
    return ("passed" if passed else "failed"), f"verifier_result.rewards.reward = {reward}"


def _terminal_bench(doc: dict[str, Any]) -> tuple[OutcomeStatus, str] | None:
    if "trial_name" not in doc or "is_resolved" not in doc:
        return None
    resolved = doc["is_resolved"]
    if isinstance(resolved, bool):
        return ("passed" if resolved else "failed"), f"is_resolved = {str(resolved).lower()}"
    mode = str(doc.get("failure_mode") or "unset")[:60]
    return "unknown", f"is_resolved = {resolved!r:.20}, failure_mode = {mode}: {UNEVALUATED}"


def _object(path: Path) -> dict[str, Any] | None:
    """The file's JSON object; None when absent, unreadable or another kind of file (the SWE-bench
    parsers report a broken `results.json`)."""
    try:
        doc = orjson.loads(read_regular(path, TRIAL_MAX_BYTES, "too large for a trial file"))
    except (OSError, orjson.JSONDecodeError):
        return None
    return doc if isinstance(doc, dict) else None
