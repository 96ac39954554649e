"""The evaluation files around a SWE-agent run directory (`<run>/trajs/<task>.traj`):
`metadata.yaml` names the model, `logs/<task>/run_instance.log` or `results/results.json` holds the
verdict. They are read once per run directory or per task, never required."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from agentlens.formats import _openhands_common as common
from agentlens.trajectory import Outcome, OutcomeStatus

RESULT_LINE = re.compile(rb"Result for (\S+): resolved: (True|False)")
MODEL_LINE = re.compile(r"^name:\s*(.+)$", re.MULTILINE)
PLACEHOLDER_MODELS = {"replay", "instant_empty_submit", "human", "human_thought"}


def run_model(path: Path, doc: dict[str, Any]) -> str | None:
    """The model: `metadata.yaml` of the run directory, else the replay config, else the run
    directory's name (`<model>__<dataset>__<config>__t-...`)."""
    run_dir = path.parent.parent if path.parent.name == "trajs" else path.parent
    model = _metadata_model(str(run_dir)) or _replay_model(doc.get("replay_config"))
    if model:
        return model
    name = path.parent.name
    return name.split("__")[0] if "__t-" in name else None


@lru_cache(maxsize=256)
def _metadata_model(run_dir: str) -> str | None:
    try:
        text = (Path(run_dir) / "metadata.yaml").read_text(errors="replace")
    except OSError:
        return None
    match = MODEL_LINE.search(text)
    if match is None:
        return None
    return match[1].split("+")[-1].strip().strip("\"'") or None


def _replay_model(config: Any) -> str | None:
    if isinstance(config, str):
        config = common.parse_arguments(config)
    agent = common.as_dict(common.as_dict(config).get("agent"))
    name = common.as_dict(agent.get("model")).get("name")
    return str(name) if name and name not in PLACEHOLDER_MODELS else None


def run_outcome(path: Path, task_id: str) -> Outcome:
    """The verdict from the evaluation files next to `trajs/`, when there are any."""
    if path.parent.name != "trajs":
        return Outcome()
    run_dir = path.parent.parent
    try:
        log = (run_dir / "logs" / task_id / "run_instance.log").read_bytes()
    except OSError:
        log = b""
    at = log.rfind(b"Result for ")
    if at >= 0:
        match = RESULT_LINE.match(log, at)
        if match and match[1].decode(errors="replace") == task_id:
            status: OutcomeStatus = "passed" if match[2] == b"True" else "failed"
            return Outcome(status=status, source="run_instance.log")
    return _results_json(run_dir / "results" / "results.json", task_id)


def _results_json(results: Path, task_id: str) -> Outcome:
    if not results.is_file():
        return Outcome()
    try:
        buckets = common.as_dict(common.parse_arguments(results.read_bytes()))
    except OSError:
        return Outcome()
    if task_id in (buckets.get("resolved") or []):
        return Outcome(status="passed", source="results.json")
    for bucket in ("unresolved_ids", "empty_patch_ids", "error_ids"):
        if task_id in (buckets.get(bucket) or []):
            return Outcome(status="failed", source="results.json", detail=bucket)
    return Outcome()
