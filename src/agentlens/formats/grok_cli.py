"""Grok CLI session folders: `~/.grok/sessions/<workspace>/<session>/`.

The trace is `updates.jsonl`: one Agent Client Protocol notification per line,
`{"method": "session/update" | "_x.ai/session/update", "params": {"update": {...}}, "timestamp"}`
(seconds). `update.sessionUpdate` says what it is:
* `user_message_chunk`, `agent_message_chunk`, `agent_thought_chunk`: streamed text
  (`content.text`); consecutive chunks of one kind make one message;
* `tool_call` (`toolCallId`, `title`, `rawInput`, `_meta["x.ai/tool"].name`): a call, one step;
* `tool_call_update` (`status`, `rawOutput`, `content`): its result. `status: failed` is an error,
  and so is a non-zero `exit_code` (except grep's 1, "no match").
Beside it, `summary.json` (`info.id`, `info.cwd`, `current_model_id`) and `signals.json`
(`primaryModelId`, `modelsUsed`, tool counters, `contextTokensUsed`) give the id and model. The
folder has no billed token counts: `contextTokensUsed` is the context window's fill at the end,
kept in metadata, never reported as usage. Calls start in `info.cwd` until a shell command moves
the folder (`_steps.start_in_session_folder`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import orjson

from agentlens.formats._json import ReadGuard, head_text, iter_jsonl, json_type, obj, text
from agentlens.formats._reader_base import SuffixReader
from agentlens.formats._steps import ToolView, call_arguments, classify, start_in_session_folder
from agentlens.formats.limits import read_bounded
from agentlens.trajectory import Agent, Source, Step, StepKind, Trajectory

UPDATE = re.compile(r'"method"\s*:\s*"(?:_x\.ai/)?session/update"')
CHUNKS: dict[str, StepKind] = {
    "user_message_chunk": "user",
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "agent",
}
RENAMED = {"search_replace": "edit", "todo_write": "todowrite", "list_dir": "ls"}
SHELL = {"run_terminal_command", "run_command", "bash"}
PATH_ARGS = ("target_file", "file_path", "path", "absolute_path")
SIGNALS_KEPT = ("modelsUsed", "toolCallCount", "toolFailureCount", "compactionCount")
NO_MATCH = {"grep": 1}


class GrokCliReader(SuffixReader):
    name: ClassVar[str] = "grok-cli"
    suffixes: ClassVar[tuple[str, ...]] = (".jsonl",)

    @classmethod
    def handles_bytes(cls, head: bytes) -> bool:
        first = head_text(head).split("\n", 1)[0]
        return bool(UPDATE.search(first)) and '"sessionUpdate"' in first

    def read(self, path: Path, data: bytes) -> Iterator[Trajectory]:
        session = _Session()
        with ReadGuard(path, self.name, loose=True):
            for number, line in iter_jsonl(path, data, self.name):
                if not isinstance(line, dict):
                    session.warnings.append(f"line {number}: skipped (a JSON {json_type(line)})")
                    continue
                session.take(line, f"line {number}")
            summary = _sibling(path, "summary.json", session.warnings)
            signals = _sibling(path, "signals.json", session.warnings)
            yield _trajectory(path, session, summary, signals)


def tool_view(name: str, args: dict[str, Any]) -> ToolView:
    """Category, command and files of a Grok CLI tool call, through the shared rules."""
    key = name.strip().lower()
    if key in SHELL:
        command = args.get("command")
        return classify("bash", {"command": command} if isinstance(command, str) else {})
    where = next((args[k] for k in PATH_ARGS if isinstance(args.get(k), str)), None)
    return classify(RENAMED.get(key, name), {**args, "file_path": where} if where else args)


class _Session:
    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.calls: dict[str, Step] = {}
        self.pending: list[str] = []  # agent text not yet attached to a step
        self.said: list[str] = []  # the user's text not yet a step, joined once (not `+=`)
        self.said_at: datetime | None = None
        self.warnings: list[str] = []
        self.unread: Counter[str] = Counter()

    def take(self, line: dict[str, Any], where: str) -> None:
        params = obj(line.get("params"), f"{where}: params")
        update = obj(params.get("update"), f"{where}: params.update")
        kind = text(update.get("sessionUpdate"), f"{where}: sessionUpdate") or ""
        when = _time(line.get("timestamp"))
        if kind in CHUNKS:
            self._chunk(CHUNKS[kind], update, when, where)
        elif kind == "tool_call":
            self._call(update, when, where)
        elif kind == "tool_call_update":
            self._result(update, where)
        else:
            self.unread[kind or "(no sessionUpdate)"] += 1

    def _chunk(self, kind: StepKind, update: dict[str, Any], when: Any, where: str) -> None:
        content = obj(update.get("content"), f"{where}: content")
        piece = text(content.get("text"), f"{where}: content.text") or ""
        if kind == "agent":
            self.pending.append(piece)
            return
        if self.pending:
            self.flush()
        if not self.said:
            self.said_at = when
        self.said.append(piece)

    def _call(self, update: dict[str, Any], when: Any, where: str) -> None:
        meta = obj(obj(update.get("_meta"), f"{where}: _meta").get("x.ai/tool"), f"{where}: _meta")
        name = text(meta.get("name"), f"{where}: tool name") or text(update.get("title"), where)
        args = call_arguments(update.get("rawInput"))
        view = tool_view(name or "unknown", args)
        call_id = text(update.get("toolCallId"), f"{where}: toolCallId")
        self._flush_said()
        step = Step(
            index=0,
            kind="tool",
            text="".join(self.pending),
            tool_name=name or "unknown",
            category=view.category,
            call_id=call_id,
            arguments=args,
            command=view.command,
            files=view.files,
            timestamp=when,
            raw=update,
        )
        self.pending = []
        self._add(step)
        if call_id is not None:
            self.calls[call_id] = step

    def _result(self, update: dict[str, Any], where: str) -> None:
        call_id = text(update.get("toolCallId"), f"{where}: toolCallId")
        step = self.calls.get(call_id or "")
        if step is None:
            self.warnings.append(f"{where}: update of unknown call {call_id!r} skipped")
            return
        status = update.get("status")
        if status not in ("completed", "failed"):
            return
        output = obj(update.get("rawOutput"), f"{where}: rawOutput")
        step.observation = _observation(output, update.get("content"))
        code = output.get("exit_code")
        failed_exit = isinstance(code, int) and code not in (0, NO_MATCH.get(step.tool_name or ""))
        step.is_error = status == "failed" or failed_exit

    def flush(self) -> None:
        self._flush_said()
        if self.pending:
            self._add(Step(index=0, kind="agent", text="".join(self.pending)))
            self.pending = []

    def _flush_said(self) -> None:
        if self.said:
            self._add(Step(index=0, kind="user", text="".join(self.said), timestamp=self.said_at))
            self.said = []

    def _add(self, step: Step) -> None:
        step.index = len(self.steps)
        self.steps.append(step)


def _observation(output: dict[str, Any], content: Any) -> str | None:
    file_content = output.get("FileContent")
    if isinstance(file_content, dict) and isinstance(file_content.get("content"), str):
        return str(file_content["content"])
    parts = [output[k] for k in ("text", "stdout", "output") if isinstance(output.get(k), str)]
    stderr = output.get("stderr")
    parts += [str(s) for s in stderr] if isinstance(stderr, list) else []
    if parts:
        return "\n".join(parts)
    if isinstance(content, list) and content:
        return orjson.dumps(content).decode()
    return orjson.dumps(output).decode() if output else None


def _time(value: Any) -> datetime | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 1e11:
        return datetime.fromtimestamp(value, UTC)
    return None


def _sibling(path: Path, name: str, warnings: list[str]) -> dict[str, Any]:
    sibling = path.with_name(name)
    if not sibling.is_file():
        return {}
    try:
        value = orjson.loads(read_bounded(sibling))
    except (OSError, orjson.JSONDecodeError) as exc:
        warnings.append(f"{name} not read: {exc}")
        return {}
    if not isinstance(value, dict):
        warnings.append(f"{name} not read: a JSON {json_type(value)}, not an object")
        return {}
    return value


def _trajectory(
    path: Path, session: _Session, summary: dict[str, Any], signals: dict[str, Any]
) -> Trajectory:
    session.flush()
    info = obj(summary.get("info"), "summary.json: info")
    model = text(signals.get("primaryModelId"), "signals.json: primaryModelId")
    model = model or text(summary.get("current_model_id"), "summary.json: current_model_id")
    for step in session.steps:
        step.model = model if step.kind != "user" else None
    metadata: dict[str, Any] = {k: signals[k] for k in SIGNALS_KEPT if k in signals}
    if "contextTokensUsed" in signals:
        metadata["context_tokens_at_end"] = signals["contextTokensUsed"]
    if isinstance(info.get("cwd"), str):
        metadata["cwd"] = info["cwd"]
    start_in_session_folder(session.steps, info.get("cwd"))
    if session.unread:
        metadata["unread_updates"] = dict(session.unread)
    if session.warnings:
        metadata["warnings"] = session.warnings
    return Trajectory(
        id=str(text(info.get("id"), "summary.json: info.id") or path.parent.name),
        task=next((s.text for s in session.steps if s.kind == "user"), None),
        agent=Agent(name="grok-cli"),
        model=model,
        source=Source(format=GrokCliReader.name, path=str(path)),
        steps=session.steps,
        metadata=metadata,
    )
