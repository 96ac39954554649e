"""OpenHands evaluation `output.jsonl`: one run per line, its events in `history`.

The same records saved as a `.json` file (pretty-printed, as `jq .` or a notebook writes them)
are read too: one record, or a list of them.

`history` holds legacy V0 events (OpenHands evaluation, the resolver) or V1 SDK events with a
`kind` (OpenHands/benchmarks). The resolver variant carries a verdict in `success`; SWE-bench-style
outputs carry only `test_result.git_patch`, so their outcome stays unknown.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from agentlens.errors import SchemaError
from agentlens.formats import _openhands_common as oh
from agentlens.formats._json import ReadGuard, iter_jsonl, loads, require
from agentlens.formats._openhands_legacy import reported_usage
from agentlens.formats._openhands_sdk import V1Converter
from agentlens.formats._reader_base import SuffixReader
from agentlens.formats.openhands_events import LegacyConverter
from agentlens.trajectory import Agent, Outcome, Source, Step, Trajectory, Usage

FIRST_KEY = re.compile(rb'^\s*\[?\s*\{\s*"(instance_id|issue|instruction|test_result|history)"\s*:')
ENVELOPE_KEYS = (b'"instruction"', b'"history"', b'"instance_id"', b'"git_patch"')


class OpenHandsEvalReader(SuffixReader):
    name: ClassVar[str] = "openhands-eval"
    lines_are_runs: ClassVar[bool] = True
    suffixes: ClassVar[tuple[str, ...]] = (".jsonl", ".json")

    @classmethod
    def handles_bytes(cls, head: bytes) -> bool:
        if not FIRST_KEY.match(head[:512]):
            return False
        return sum(key in head for key in ENVELOPE_KEYS) >= 2

    def read(self, path: Path, data: bytes) -> Iterator[Trajectory]:
        for number, record in _records(path, data, self.name):
            record = require(path, self.name, record, dict, f"line {number}")
            history = record.get("history")
            if not isinstance(history, list):
                raise SchemaError(path, f"line {number} has no 'history' list", self.name)
            with ReadGuard(path, self.name):
                trajectory = self._trajectory(path, number, record, history)
            yield trajectory

    def _trajectory(
        self, path: Path, number: int, record: dict[str, Any], history: list[Any]
    ) -> Trajectory:
        run_id = _run_id(path, number, record)
        is_v1 = any(isinstance(e, dict) and "kind" in e for e in history[:5])
        subs: list[Trajectory] = []
        if is_v1:
            v1 = V1Converter(path, self.name)
            steps = v1.convert(history)
            usage, cost = v1.reported()
            model = v1.model
        else:
            legacy = LegacyConverter(path, self.name)
            steps, subs = legacy.convert(history, run_id)
            usage, cost = reported_usage(record.get("metrics"))
            model = legacy.model
            _spread_costs(steps, oh.as_dict(record.get("metrics")).get("costs"))
        metadata = oh.as_dict(record.get("metadata"))
        llm = oh.as_dict(metadata.get("llm_config") or metadata.get("llm"))
        return Trajectory(
            id=run_id,
            task_id=_task_id(record),
            task=_task(record, steps),
            agent=Agent(name=str(metadata.get("agent_class") or "OpenHands")),
            model=str(llm.get("model") or model or "") or None,
            outcome=_outcome(record),
            source=Source(
                format=self.name,
                path=str(path),
                format_version="v1-history" if is_v1 else "v0-history",
                index=number - 1,
            ),
            steps=steps,
            reported_usage=usage if isinstance(usage, Usage) else None,
            reported_cost=cost,
            subtrajectories=subs,
            metadata=_metadata(record, metadata),
        )


def _records(path: Path, data: bytes, format: str) -> Iterator[tuple[int, Any]]:
    """(record number, record): a JSONL line each, or the one document of a `.json` file."""
    if path.suffix != ".json":
        yield from iter_jsonl(path, data, format)
        return
    doc = loads(path, data, format)
    yield from enumerate(doc if isinstance(doc, list) else [doc], start=1)


def _run_id(path: Path, number: int, record: dict[str, Any]) -> str:
    task_id = _task_id(record)
    return f"{path.stem}:{task_id}" if task_id else f"{path.stem}:{number}"


def _task_id(record: dict[str, Any]) -> str | None:
    if record.get("instance_id") is not None:
        return str(record["instance_id"])
    issue = oh.as_dict(record.get("issue"))
    if issue.get("repo") is not None:
        return f"{issue.get('owner')}/{issue.get('repo')}#{issue.get('number')}"
    return None


def _task(record: dict[str, Any], steps: list[Step]) -> str | None:
    instance = oh.as_dict(record.get("instance"))
    for value in (instance.get("problem_statement"), record.get("instruction")):
        if isinstance(value, str) and value:
            return value
    return next((s.text for s in steps if s.kind == "user"), None)


def _outcome(record: dict[str, Any]) -> Outcome:
    success = record.get("success")
    if isinstance(success, bool):
        detail = record.get("result_explanation")
        return Outcome(
            status="passed" if success else "failed",
            source="openhands-resolver",
            detail=str(detail) if detail else None,
        )
    return Outcome()


def _metadata(record: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
    names = ("git_commit", "dataset", "max_iterations")
    keep: dict[str, Any] = {k: metadata[k] for k in names if k in metadata}
    for key in ("error", "test_result", "issue_type", "comment_success"):
        if record.get(key) is not None:
            keep[key] = record[key]
    return keep


def _spread_costs(steps: list[Step], costs: Any) -> None:
    """Resolver outputs list one cost per model call but no usage on the events: when the
    counts agree, each agent step gets its call's cost."""
    agent_steps = [s for s in steps if s.kind in ("agent", "tool") and s.cost is None]
    if not isinstance(costs, list) or len(costs) != len(agent_steps) or any(s.cost for s in steps):
        return
    for step, cost in zip(agent_steps, costs, strict=True):
        step.cost = float(cost) if isinstance(cost, int | float) else None
