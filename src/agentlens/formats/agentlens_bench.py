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
from agentlens.formats._json import (
    ReadGuard,
    ShapeError,
    arr,
    count,
    json_type,
    loads,
    obj,
    preview,
    require,
    text,
)
from agentlens.formats._reader_base import SuffixReader
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


class AgentLensBenchReader(SuffixReader):
    name: ClassVar[str] = "agentlens-bench"
    suffixes: ClassVar[tuple[str, ...]] = (".json",)

    @classmethod
    def handles_bytes(cls, head: bytes) -> bool:
        start = head[:256]
        return b'"initial_state"' in start and b'"merged_state_' not in start

    def read(self, path: Path, data: bytes) -> Iterator[Trajectory]:
        doc = require(path, self.name, loads(path, data, self.name), dict, "top level")
        states = require(path, self.name, doc.get("states"), dict, "'states'")
        initial = doc.get("initial_state")
        if not isinstance(initial, str) or initial not in states:
            raise SchemaError(
                path, f"initial_state {preview(initial)} is not among the states", self.name
            )
        with ReadGuard(path, self.name):
            yield self._trajectory(path, doc, states, initial)

    def _trajectory(
        self, path: Path, doc: dict[str, Any], states: dict[str, Any], initial: str
    ) -> Trajectory:
        meta = obj(doc.get("metadata"), "'metadata'")
        for key, state in states.items():
            if not isinstance(state, dict):
                raise ShapeError(f"states.{key} should be an object, found {json_type(state)}")
        ordered = sorted(states.items(), key=lambda kv: _order(*kv))
        steps = [self._task_step(states[initial], meta)]
        steps += [self._step(i, key, s) for i, (key, s) in enumerate(ordered) if key != initial]
        for i, step in enumerate(steps):
            step.index = i
        return Trajectory(
            id=path.stem,
            task_id=text(meta.get("task_name"), "metadata.task_name"),
            task=text(meta.get("task_description"), "metadata.task_description"),
            agent=Agent(
                name=text(meta.get("source_format"), "metadata.source_format"),
                version=text(meta.get("generator"), "metadata.generator"),
            ),
            model=text(meta.get("model_name"), "metadata.model_name"),
            outcome=_outcome(path, meta),
            source=Source(format=self.name, path=str(path), format_version="swe-trace-sdk"),
            steps=steps,
            metadata={k: v for k, v in meta.items() if k != "task_description"},
        )

    def _task_step(self, state: dict[str, Any], meta: dict[str, Any]) -> Step:
        task = text(meta.get("task_description"), "metadata.task_description")
        return Step(index=0, kind="user", text=task or "", raw=state)

    def _step(self, index: int, key: str, state: dict[str, Any]) -> Step:
        """The common, well-typed state in one pass; anything else goes to `_checked_step`,
        which names the bad field (checking field by field would cost ~30% of the reader)."""
        entry, smeta = state.get("log_entry") or {}, state.get("metadata") or {}
        if type(entry) is not dict or type(smeta) is not dict:
            return self._checked_step(index, key, state)
        args, files = entry.get("args") or {}, state.get("files_touched") or []
        tool = state.get("tool_used") or entry.get("tool") or "unknown"
        said = smeta.get("thought") or (args.get("thought") if type(args) is dict else None)
        call_id, preview, model = entry.get("id"), entry.get("response_preview"), smeta.get("model")
        sent, received = smeta.get("input_tokens") or 0, smeta.get("output_tokens") or 0
        cached, stage = smeta.get("cached_input_tokens") or 0, state.get("intent_stage") or ""
        category = CATEGORIES.get(tool, ToolCategory.OTHER) if type(tool) is str else None
        if type(args) is not dict or category is None:
            return self._checked_step(index, key, state)
        command = args.get("command") if category is ToolCategory.RUN_COMMAND else None
        plain = (
            (said is None or type(said) is str)
            and (call_id is None or type(call_id) is str)
            and (preview is None or type(preview) is str)
            and (model is None or type(model) is str)
            and (command is None or type(command) is str)
            and type(sent) is int
            and type(received) is int
            and type(cached) is int
            and type(stage) is str
            and type(files) is list
            and (not files or all(type(f) is str for f in files))
        )
        if not plain:
            return self._checked_step(index, key, state)
        return Step(
            index=index,
            kind="tool",
            text=said or "",
            tool_name=tool,
            category=category,
            call_id=call_id,
            arguments=args,
            command=command,
            files=list(files),
            observation=preview,
            timestamp=parse_time(smeta.get("timestamp")),
            usage=Usage(prompt_tokens=sent, completion_tokens=received, cached_tokens=cached),
            model=model,
            stored_stage=STAGES.get(stage),
            raw=state,
        )

    def _checked_step(self, index: int, key: str, state: dict[str, Any]) -> Step:
        where = f"states.{key}"
        entry = obj(state.get("log_entry"), f"{where}.log_entry")
        smeta = obj(state.get("metadata"), f"{where}.metadata")
        tool = text(state.get("tool_used") or entry.get("tool"), f"{where}.tool_used") or "unknown"
        args = obj(entry.get("args"), f"{where}.log_entry.args")
        category = CATEGORIES.get(tool, ToolCategory.OTHER)
        files = arr(state.get("files_touched"), f"{where}.files_touched")
        command = args.get("command") if category is ToolCategory.RUN_COMMAND else None
        return Step(
            index=index,
            kind="tool",
            text=text(smeta.get("thought") or args.get("thought"), f"{where} thought") or "",
            tool_name=tool,
            category=category,
            call_id=text(entry.get("id"), f"{where}.log_entry.id"),
            arguments=args,
            command=text(command, f"{where}.log_entry.args.command"),
            files=[text(f, f"{where}.files_touched[{i}]") or "" for i, f in enumerate(files)],
            observation=text(entry.get("response_preview"), f"{where}.log_entry.response_preview"),
            timestamp=parse_time(smeta.get("timestamp")),
            usage=Usage(
                prompt_tokens=count(smeta.get("input_tokens"), f"{where}.metadata.input_tokens"),
                completion_tokens=count(
                    smeta.get("output_tokens"), f"{where}.metadata.output_tokens"
                ),
                cached_tokens=count(
                    smeta.get("cached_input_tokens"), f"{where}.metadata.cached_input_tokens"
                ),
            ),
            model=text(smeta.get("model"), f"{where}.metadata.model"),
            stored_stage=STAGES.get(text(state.get("intent_stage"), f"{where}.intent_stage") or ""),
            raw=state,
        )


def _order(key: str, state: dict[str, Any]) -> int:
    step = state.get("step")
    return step if type(step) is int else count(step, f"states.{key}.step")


def _outcome(path: Path, meta: dict[str, Any]) -> Outcome:
    status = meta.get("pass_fail_status")
    if status in ("passed", "failed"):
        return Outcome(status=status, source="file")
    match = NAME_OUTCOME.search(path.name)
    if match:
        return Outcome(status="passed" if match[1] == "pass" else "failed", source="file-name")
    return Outcome()
