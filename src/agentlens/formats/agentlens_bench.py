"""AgentLens-Bench / swe-trace-sdk Trace JSON: `{initial_state, states{state_N}, transitions, metadata}`.

Each state after the initial one is one tool call. Its observation is the release's 500-character
preview (the full text was not released). The stored `intent_stage` label is kept in
`Step.stored_stage`, and the whole state dict in `Step.raw`, so the `sdk-compat` profile can use
the release's own per-state fields.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from agentlens.errors import SchemaError
from agentlens.formats._json import loads, require
from agentlens.formats._steps import parse_time
from agentlens.trajectory import Agent, Outcome, Source, Step, ToolCategory, Trajectory, Usage

CATEGORIES = {
    "run_in_terminal": ToolCategory.RUN_COMMAND,
    "read_file": ToolCategory.READ_FILE,
    "replace_string_in_file": ToolCategory.EDIT,
    "create_file": ToolCategory.CREATE_FILE,
    "think": ToolCategory.THINK,
    "list_dir": ToolCategory.LIST_DIR,
    "finish": ToolCategory.FINISH,
}
STAGES = {"exploration": "E", "implementation": "I", "verification": "V", "orchestration": "O"}
NAME_OUTCOME = re.compile(r"-(pass|fail)-\d+")


class AgentLensBenchReader:
    name: ClassVar[str] = "agentlens-bench"

    def __init__(self, *, lenient: bool = False) -> None:
        self.lenient = lenient

    @classmethod
    def handles_location(cls, path: Path) -> bool:
        return path.suffix == ".json"

    @classmethod
    def handles_bytes(cls, head: bytes) -> bool:
        start = head[:256]
        return b'"initial_state"' in start and b'"merged_state_' not in start

    def read(self, path: Path, data: bytes) -> Iterator[Trajectory]:
        doc = require(path, self.name, loads(path, data, self.name), dict, "top level")
        states = require(path, self.name, doc.get("states"), dict, "'states'")
        meta = doc.get("metadata") or {}
        initial = doc.get("initial_state")
        if initial not in states:
            raise SchemaError(path, f"initial_state {initial!r} is not among the states", self.name)
        ordered = sorted(states.values(), key=lambda s: s.get("step", 0))
        steps = [self._task_step(states[initial], meta)]
        steps += [
            self._step(i, s) for i, s in enumerate(ordered, start=0) if s is not states[initial]
        ]
        for i, step in enumerate(steps):
            step.index = i
        yield Trajectory(
            id=path.stem,
            task_id=meta.get("task_name"),
            task=meta.get("task_description"),
            agent=Agent(name=meta.get("source_format"), version=meta.get("generator")),
            model=meta.get("model_name"),
            outcome=_outcome(path, meta),
            source=Source(format=self.name, path=str(path), format_version="swe-trace-sdk"),
            steps=steps,
            metadata={k: v for k, v in meta.items() if k != "task_description"},
        )

    def _task_step(self, state: dict[str, Any], meta: dict[str, Any]) -> Step:
        return Step(index=0, kind="user", text=meta.get("task_description") or "", raw=state)

    def _step(self, index: int, state: dict[str, Any]) -> Step:
        entry = state.get("log_entry") or {}
        smeta = state.get("metadata") or {}
        tool = state.get("tool_used") or entry.get("tool") or "unknown"
        args = entry.get("args") or {}
        category = CATEGORIES.get(tool, ToolCategory.OTHER)
        return Step(
            index=index,
            kind="tool",
            text=smeta.get("thought") or args.get("thought") or "",
            tool_name=tool,
            category=category,
            call_id=entry.get("id"),
            arguments=args,
            command=args.get("command") if category is ToolCategory.RUN_COMMAND else None,
            files=list(state.get("files_touched") or []),
            observation=entry.get("response_preview"),
            timestamp=parse_time(smeta.get("timestamp")),
            usage=Usage(
                prompt_tokens=smeta.get("input_tokens") or 0,
                completion_tokens=smeta.get("output_tokens") or 0,
                cached_tokens=smeta.get("cached_input_tokens") or 0,
            ),
            model=smeta.get("model"),
            stored_stage=STAGES.get(state.get("intent_stage") or ""),
            raw=state,
        )


def _outcome(path: Path, meta: dict[str, Any]) -> Outcome:
    status = meta.get("pass_fail_status")
    if status in ("passed", "failed"):
        return Outcome(status=status, source="file")
    match = NAME_OUTCOME.search(path.name)
    if match:
        return Outcome(status="passed" if match[1] == "pass" else "failed", source="file-name")
    return Outcome()
