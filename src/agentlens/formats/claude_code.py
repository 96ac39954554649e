"""Claude Code session JSONL (`~/.claude/projects/<cwd>/<session>.jsonl`) and its sub-agent files.

Steps follow file order. One API response is split over several lines sharing `message.id`, each
repeating the same `usage`: a turn is one message id, and its usage is counted once, on the
turn's first step (the last line's figures win, being the most complete). Text and thinking
blocks become the `text` of the turn's next tool call, or an `agent` step when no call follows.
`tool_result` blocks in user lines fill in the matching call's observation and `is_error`.
Each line's `cwd` is the Bash tool's folder when the line was written (a `cd` moves the next
lines'): a call's `Step.cwd` is its line's.

Sub-agents live in `<session>/subagents/agent-<id>.jsonl`; each becomes a subtrajectory with id
`<session>/<agentId>`, and the `Task` call that spawned it points to it through the result's
`toolUseResult.agentId` (or the `agent_progress` lines). Lines that are not JSON objects (the
hand-made `edge_cases.jsonl` has a bare string, an int and a list) are skipped with a warning
in `metadata["warnings"]`.

`claude -p --output-format stream-json --verbose` prints the same message lines without the
session file's tree fields (`session_id` for `sessionId`, no `parentUuid` or timestamps), between
a `system`/`init` line (model, tools, CLI version) and a `result` line (`total_cost_usd`, the
run's usage, `num_turns`, `is_error`): those become `reported_cost`, `reported_usage` and
`metadata["result"]`. A sub-agent's lines arrive inline, marked `parent_tool_use_id`: they make
the subtrajectory `<session>/<tool_use_id>`, linked from the `Task` call that spawned it.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from agentlens.errors import AgentLensError
from agentlens.formats._json import ReadGuard, count, head_text, iter_jsonl, json_type, text
from agentlens.formats._reader_base import SuffixReader
from agentlens.formats._steps import call_arguments, classify, parse_time
from agentlens.formats.limits import read_bounded
from agentlens.shell.working_dir import working_folder
from agentlens.trajectory import Agent, Source, Step, Trajectory, Usage

SESSION_KEY = re.compile(r'"(?:sessionId|leafUuid|session_id)"\s*:')
LINE_SHAPE = re.compile(
    r'"parentUuid"\s*:|"type"\s*:\s*"(?:file-history-snapshot|summary)"'
    r'|"subtype"\s*:\s*"init"|"parent_tool_use_id"\s*:'  # stream-json
)
SKIPPED_TYPES = {"progress", "file-history-snapshot", "queue-operation"}
RESULT_FIELDS = ("subtype", "is_error", "num_turns", "duration_ms", "duration_api_ms", "result")


class ClaudeCodeReader(SuffixReader):
    name: ClassVar[str] = "claude-code"
    reads_lines: ClassVar[bool] = True
    """Only walks the lines of `data` (`_json.iter_jsonl`): a large file comes as a `LargeFile`."""
    suffixes: ClassVar[tuple[str, ...]] = (".jsonl",)

    @classmethod
    def handles_bytes(cls, head: bytes) -> bool:
        text = head_text(head)
        return text.startswith("{") and bool(SESSION_KEY.search(text) and LINE_SHAPE.search(text))

    def read(self, path: Path, data: bytes) -> Iterator[Trajectory]:
        trajectory = _Builder(path).build(data)
        for sub_path in _subagent_paths(path):
            try:  # a broken sub-agent file costs that sub-agent, not the session
                sub = _Builder(sub_path).build(read_bounded(sub_path))
            except (AgentLensError, OSError) as exc:
                warning = f"sub-agent file skipped: {exc}"
                trajectory.add_warnings([warning])
                continue
            sub.parent_id = trajectory.id
            trajectory.subtrajectories.append(sub)
        yield trajectory


def _subagent_paths(path: Path) -> list[Path]:
    folder = path.parent / path.stem / "subagents"
    return sorted(folder.glob("agent-*.jsonl")) if folder.is_dir() else []


def session_of(path: Path) -> Path | None:
    """The session file that reads `path` as one of its sub-agents, when `path` is
    `<session>/subagents/agent-*.jsonl` and `<session>.jsonl` exists."""
    if path.parent.name != "subagents" or not path.name.startswith("agent-"):
        return None
    folder = Path(os.path.abspath(path)).parent.parent  # `subagents/x` read from `<session>/`
    session = folder.with_name(f"{folder.name}.jsonl")
    return session if path.suffix == ".jsonl" and session.is_file() else None


class _Builder:
    """Walks one file's lines, keeping the open tool calls and the current turn."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.steps: list[Step] = []
        self.calls: dict[str, Step] = {}
        self.turns: dict[str, tuple[Step | None, Usage | None]] = {}
        self.turn_numbers: dict[str, int] = {}
        self.pending: list[str] = []
        self.pending_line: dict[str, Any] = {}
        self.first: dict[str, Any] = {}
        self.warnings: list[str] = []
        self.skipped: Counter[str] = Counter()
        self.summaries: list[str] = []
        self.agent_ids: dict[str, str] = {}
        self.where = "line 1"
        self.init: dict[str, Any] = {}
        self.result: dict[str, Any] = {}
        self.inline: dict[str, _Builder] = {}
        """Sub-agents of a stream-json run, by the `Task` call's id (`parent_tool_use_id`)."""

    def build(self, data: bytes) -> Trajectory:
        with ReadGuard(self.path, ClaudeCodeReader.name):
            for number, line in iter_jsonl(self.path, data, ClaudeCodeReader.name):
                if not isinstance(line, dict):
                    self.warnings.append(
                        f"line {number}: skipped (a JSON {json_type(line)}, not an object)"
                    )
                    continue
                self.where = f"line {number}"
                self._take(line)
            return self._finish()

    def _take(self, line: dict[str, Any]) -> None:
        parent = text(line.get("parent_tool_use_id"), f"{self.where}: parent_tool_use_id")
        builder = self if parent is None else self.inline.setdefault(parent, _Builder(self.path))
        builder.where = self.where
        builder._first(line)
        builder._line(line)

    def _finish(self) -> Trajectory:
        trajectory = self._built()
        children = {call_id: (sub, sub._built()) for call_id, sub in self.inline.items()}
        for call_id, (_, child) in children.items():
            child.id = f"{trajectory.id}/{call_id}"
        for call_id, (_, child) in children.items():  # a sub-agent may spawn one of its own
            owner, trajectory_of_owner = self, trajectory
            for sub, built in children.values():
                if call_id in sub.calls:
                    owner, trajectory_of_owner = sub, built
            child.parent_id = trajectory_of_owner.id
            trajectory_of_owner.subtrajectories.append(child)
            if call_id in owner.calls:
                owner.calls[call_id].subtrajectory = child.id
        return trajectory

    def _built(self) -> Trajectory:
        self._flush()
        self._finish_usage()
        return self._trajectory()

    def _first(self, line: dict[str, Any]) -> None:
        """The first line with a session id supplies the session's id, version and agent id."""
        if self.first or not (line.get("sessionId") or line.get("session_id")):
            return
        for key in ("sessionId", "session_id", "version", "agentId"):
            text(line.get(key), f"{self.where}: {key}")
        self.first = line

    def _line(self, line: dict[str, Any]) -> None:
        kind = line.get("type")
        if kind == "assistant":
            self._assistant(line)
        elif kind == "user":
            self._flush()
            self._user(line)
        elif kind == "system" and isinstance(line.get("content"), str):
            self._flush()
            self._add(Step(index=0, kind="system", text=line["content"], raw=line), line)
        elif kind == "system" and line.get("subtype") == "init":
            self.init = line
        elif kind == "result":
            self._flush()
            self.result = line
        elif kind == "summary":
            self.summaries.append(str(line.get("summary") or ""))
        elif kind == "progress":
            self._progress(line)
        else:
            self.skipped[kind if isinstance(kind, str) else json_type(kind)] += 1

    def _assistant(self, line: dict[str, Any]) -> None:
        message = _dict(line.get("message"))
        turn_key = text(message.get("id") or line.get("uuid"), f"{self.where}: message id")
        turn_key = turn_key or str(len(self.turns))
        if turn_key not in self.turns:
            self._flush()
            self.turns[turn_key] = (None, None)
            self.turn_numbers[turn_key] = len(self.turn_numbers)
        first, _ = self.turns[turn_key]
        usage = _usage(message.get("usage"), f"{self.where}: message.usage")
        self.turns[turn_key] = (first, usage or self.turns[turn_key][1])
        raw: dict[str, Any] | None = line  # on the first call only: N calls would save N copies
        for block in _blocks(message.get("content")):
            if block.get("type") in ("text", "thinking"):
                self.pending.append(str(block.get("text") or block.get("thinking") or ""))
                self.pending_line = line
            elif block.get("type") == "tool_use":
                self._tool_use(block, line, turn_key, raw)
                raw = None

    def _tool_use(
        self, block: dict[str, Any], line: dict[str, Any], turn_key: str, raw: Any
    ) -> None:
        name = str(block.get("name") or "unknown")
        args = call_arguments(block.get("input"))
        view = classify(name, args)
        step = Step(
            index=0,
            kind="tool",
            text="\n\n".join(self.pending),
            tool_name=name,
            category=view.category,
            call_id=text(block.get("id"), f"{self.where}: tool_use id"),
            arguments=args,
            command=view.command,
            files=view.files,
            cwd=working_folder(line.get("cwd")),
            raw=raw,
        )
        self.pending = []
        self._add(step, line, turn_key)
        if step.call_id:
            self.calls[step.call_id] = step

    def _user(self, line: dict[str, Any]) -> None:
        message = line.get("message")
        content = message if isinstance(message, str) else _dict(message).get("content")
        texts = [content] if isinstance(content, str) else []
        for block in _blocks(content):
            if block.get("type") == "tool_result":
                self._tool_result(block, line)
            elif block.get("type") == "text":
                texts.append(str(block.get("text") or ""))
            else:  # a pasted image or document: named, as in a tool result
                texts.append(f"[{block.get('type')}]")
        if texts:
            meta = line.get("isMeta") or line.get("isCompactSummary")
            step = Step(index=0, kind="system" if meta else "user", text="\n".join(texts), raw=line)
            self._add(step, line)

    def _tool_result(self, block: dict[str, Any], line: dict[str, Any]) -> None:
        step = self.calls.get(str(block.get("tool_use_id")))
        if step is None:
            self.warnings.append(f"tool_result for unknown call {block.get('tool_use_id')}")
            return
        step.observation = _result_text(block.get("content"))
        step.is_error = bool(block.get("is_error"))
        result = line.get("toolUseResult")
        if isinstance(result, dict) and result.get("agentId"):
            self.agent_ids[str(step.call_id)] = str(result["agentId"])

    def _progress(self, line: dict[str, Any]) -> None:
        self.skipped["progress"] += 1
        data = _dict(line.get("data"))
        if data.get("type") == "agent_progress" and line.get("parentToolUseID"):
            self.agent_ids.setdefault(str(line["parentToolUseID"]), str(data.get("agentId")))

    def _flush(self) -> None:
        if self.pending:
            step = Step(
                index=0, kind="agent", text="\n\n".join(self.pending), raw=self.pending_line
            )
            turn_key = next(reversed(self.turns), None) if self.turns else None
            self._add(step, self.pending_line, turn_key)
            self.pending = []

    def _add(self, step: Step, line: dict[str, Any], turn_key: str | None = None) -> None:
        step.index = len(self.steps)
        step.timestamp = parse_time(line.get("timestamp"))
        if turn_key is not None:
            step.turn = self.turn_numbers[turn_key]
            step.model = text(_dict(line.get("message")).get("model"), f"{self.where}: model")
            first, usage = self.turns[turn_key]
            self.turns[turn_key] = (first or step, usage)
        self.steps.append(step)

    def _finish_usage(self) -> None:
        for first, usage in self.turns.values():
            if first is not None:
                first.usage = usage
        session = self.first.get("sessionId") or self.path.stem
        for call_id, agent_id in self.agent_ids.items():
            if call_id in self.calls:
                self.calls[call_id].subtrajectory = f"{session}/{agent_id}"

    def _trajectory(self) -> Trajectory:
        first = self.first
        session = first.get("sessionId") or first.get("session_id") or self.path.stem
        agent_id = first.get("agentId")
        models = Counter(s.model for s in self.steps if s.model and s.model != "<synthetic>")
        model = models.most_common(1)[0][0] if models else None
        version = first.get("version") or text(
            self.init.get("claude_code_version"), "init line: claude_code_version"
        )
        metadata: dict[str, Any] = {k: first[k] for k in ("cwd", "gitBranch") if first.get(k)}
        if self.warnings:
            metadata["warnings"] = self.warnings
        if self.summaries:
            metadata["summaries"] = self.summaries
        metadata["skipped_lines"] = dict(self.skipped)
        if self.init or self.result:
            metadata["output_format"] = "stream-json"
        if self.result:
            metadata["result"] = {k: self.result[k] for k in RESULT_FIELDS if k in self.result}
        cost: Any = self.result.get("total_cost_usd")
        return Trajectory(
            id=f"{session}/{agent_id}" if agent_id else session,
            parent_id=session if agent_id else None,
            task=next((s.text for s in self.steps if s.kind == "user"), None),
            agent=Agent(name="claude-code", version=version),
            model=model or text(self.init.get("model"), "init line: model"),
            source=Source(
                format=ClaudeCodeReader.name, path=str(self.path), format_version=version
            ),
            steps=self.steps,
            reported_usage=_usage(self.result.get("usage"), "result line: usage"),
            reported_cost=float(cost) if type(cost) in (int, float) else None,
            metadata=metadata,
        )


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _blocks(content: Any) -> list[dict[str, Any]]:
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in _blocks(content):
        text = block.get("text")
        parts.append(text if isinstance(text, str) else f"[{block.get('type')}]")
    return "\n".join(parts)


def _usage(usage: Any, where: str) -> Usage | None:
    """Anthropic usage: `input_tokens` excludes cache reads and writes; prompt counts them all."""
    if not isinstance(usage, dict):
        return None
    tokens = {
        key: count(usage.get(key), f"{where}.{key}")
        for key in (
            "input_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
            "output_tokens",
        )
    }
    return Usage(
        prompt_tokens=tokens["input_tokens"]
        + tokens["cache_read_input_tokens"]
        + tokens["cache_creation_input_tokens"],
        completion_tokens=tokens["output_tokens"],
        cached_tokens=tokens["cache_read_input_tokens"],
    )
