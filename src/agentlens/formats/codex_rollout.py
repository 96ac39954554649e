"""OpenAI Codex CLI rollout JSONL (`~/.codex/sessions/.../rollout-*.jsonl`), cli 0.40 to 0.104.

Steps come from `response_item` lines; `event_msg` lines repeat them and are ignored, except
`token_count`. A `compacted` line (the summary a compaction leaves) becomes a `system` step. A turn is one model response: the run of model items (reasoning, assistant
message, function / custom tool calls) between tool outputs or user messages, so parallel calls
share a turn. Reasoning summaries and assistant text become the `text` of the turn's next call,
or an `agent` step when the response makes no call.

A call starts in its `workdir` argument (`working_directory` of a `local_shell_call`), relative
to the turn's folder (`turn_context.cwd`, else `session_meta.cwd`), or in that folder: every call
is a new process, so a `cd` moves no later call. That is the call's `Step.cwd`.

`token_count.total_token_usage` is cumulative and may repeat: each step's usage is the difference
to the previous total, given to the response it follows (0.104 writes it after the response's
items) or, when that response already has its usage, to the next one (0.40 writes it before).

Lines are decoded by msgspec into Structs that declare only the fields used, so the bulk nobody
reads (reasoning `encrypted_content`, the `event_msg` copies, `rate_limits`) is skipped, not
built; `Step.raw` is still the item as a dict (decoded a second time, only for step items).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import orjson

from agentlens.errors import TraceError
from agentlens.formats._json import ReadGuard, head_text
from agentlens.formats._reader_base import SuffixReader
from agentlens.formats._steps import classify, parse_time, token_usage
from agentlens.formats._typed_json import (
    NULL,
    any_decoder,
    decode_lines,
    decode_raw,
    listed,
    scalar_text,
)
from agentlens.shell.working_dir import resolve, working_folder
from agentlens.trajectory import Agent, Source, Step, StepKind, Trajectory, Usage

LINE_TYPE = re.compile(r'"type"\s*:\s*"(?:session_meta|response_item|turn_context|event_msg)"')
MODEL_ITEMS = {
    "reasoning",
    "function_call",
    "custom_tool_call",
    "web_search_call",
    "local_shell_call",
}
OUTPUT_ITEMS = {"function_call_output", "custom_tool_call_output"}
SYSTEM_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md", "<permissions")
EXIT_CODE = re.compile(r"(?:Process exited with code|exit code:?)\s*(-?\d+)", re.IGNORECASE)


class _Line(msgspec.Struct):
    type: Any = None
    timestamp: Any = None
    payload: msgspec.Raw = NULL


class _TurnContext(msgspec.Struct):
    model: Any = None
    cwd: Any = None


class _Event(msgspec.Struct):
    type: Any = None
    message: Any = None
    info: Any = None


class _Item(msgspec.Struct):
    """A `response_item` payload, without the fields no step uses (`encrypted_content`)."""

    type: Any = None
    role: Any = None
    summary: Any = None
    content: Any = None
    name: Any = None
    call_id: Any = None
    id: Any = None
    arguments: Any = None
    input: Any = None
    action: Any = None
    output: Any = None


LINES = msgspec.json.Decoder(_Line)
TURN_CONTEXT = msgspec.json.Decoder(_TurnContext)
EVENT = msgspec.json.Decoder(_Event)
ITEM = msgspec.json.Decoder(_Item)


class CodexRolloutReader(SuffixReader):
    name: ClassVar[str] = "codex-rollout"
    suffixes: ClassVar[tuple[str, ...]] = (".jsonl",)

    @classmethod
    def handles_bytes(cls, head: bytes) -> bool:
        first = head_text(head).split("\n", 1)[0]
        return first.startswith("{") and '"payload"' in first and bool(LINE_TYPE.search(first))

    def read(self, path: Path, data: bytes) -> Iterator[Trajectory]:
        builder = _Builder()
        with ReadGuard(path, self.name):
            try:
                builder.feed(decode_lines(path, data, self.name, LINES))
            except msgspec.DecodeError as exc:  # a `Raw` payload is only checked when decoded
                message = f"invalid JSON on line {builder.line_number}: {exc}"
                raise TraceError(path, message, self.name) from exc
            trajectory = builder.trajectory(path)
        yield trajectory


class _Builder:
    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.calls: dict[str, Step] = {}
        self.meta: dict[str, Any] = {}
        self.model: str | None = None
        self.folder: str | None = None
        self.task: str | None = None
        self.turn = -1
        self.in_response = False
        self.pending: list[str] = []
        self.turn_usage: dict[int, Usage] = {}
        self.spare_usage: Usage | None = None
        self.total: Usage | None = None
        self.earlier = Usage()
        self.line_number = 0  # of the line being fed, for a message
        self.warnings: list[str] = []

    def feed(self, lines: list[tuple[int, _Line | None]]) -> None:
        """Every line whose payload is an object (other payloads are skipped)."""
        item_of, event_of = ITEM.decode, EVENT.decode  # one loop, no call per line: ~1000 lines
        for self.line_number, line in lines:
            if line is None:
                self.warnings.append(f"line {self.line_number}: skipped (not a JSON object)")
                continue
            kind = line.type
            try:
                if kind == "response_item":
                    item = item_of(line.payload)
                elif kind == "event_msg":
                    event = event_of(line.payload)
                    if event.type == "token_count" or event.type == "user_message":
                        self._event(event)
                    continue
                else:
                    self._other(line)
                    continue
            except msgspec.ValidationError:
                where = f"line {self.line_number}: {kind}"
                self.warnings.append(f"{where} skipped (its payload is not an object)")
                continue
            self._item(item, line.payload, line.timestamp)  # stamp parsed only for steps

    def _other(self, line: _Line) -> None:
        kind = line.type
        if kind == "turn_context":
            context = decode_raw(line.payload, TURN_CONTEXT)
            if context is not None and context.cwd is not None:
                self.folder = working_folder(context.cwd)
            if context is not None and context.model:
                model = context.model
                self.model = (
                    model if type(model) is str else scalar_text(model, "turn_context model")
                )
        elif kind == "session_meta":
            meta = any_decoder.decode(line.payload)
            if isinstance(meta, dict):
                self.meta = meta
                self.folder = working_folder(meta.get("cwd"))
        elif kind == "compacted":  # the summary the model goes on from, in place of the history
            payload = any_decoder.decode(line.payload)
            summary = payload.get("message") if isinstance(payload, dict) else None
            self._end_response(line.timestamp)
            step = Step(index=0, kind="system", text=str(summary or ""), raw=payload)
            self._add(step, line.timestamp)

    def _event(self, event: _Event) -> None:
        if event.type == "user_message" and self.task is None:
            self.task = str(event.message or "")
        elif event.type == "token_count" and isinstance(event.info, dict):
            self._token_count(event.info)

    def _token_count(self, info: dict[str, Any]) -> None:
        total = token_usage(info.get("total_token_usage"), "cached_input_tokens")
        if total is None:
            return
        previous = self.total or Usage()
        if total.prompt_tokens >= previous.prompt_tokens:
            delta = _minus(total, previous)
        else:  # the running total restarted (a new session in the same file)
            self.earlier = self.earlier + previous
            delta = token_usage(info.get("last_token_usage"), "cached_input_tokens") or total
        self.total = total
        if delta.total_tokens == 0:
            return
        if self.turn >= 0 and self.in_response and self.turn not in self.turn_usage:
            self.turn_usage[self.turn] = delta
        else:
            self.spare_usage = delta if self.spare_usage is None else self.spare_usage + delta

    def _item(self, item: _Item, raw: msgspec.Raw, stamp: Any) -> None:
        kind = item.type if isinstance(item.type, str) else None  # a list would not hash
        is_model = kind in MODEL_ITEMS or (kind == "message" and item.role == "assistant")
        if is_model and not self.in_response:
            self._start_response()
        elif not is_model:
            self._end_response(stamp)
        if kind == "reasoning":
            summary = listed(item.summary, "reasoning summary")
            self.pending += [str(s.get("text") or "") for s in summary if isinstance(s, dict)]
        elif kind == "message":
            self._message(item, raw, stamp)
        elif kind in MODEL_ITEMS:
            self._call(item, raw, stamp)
        elif kind in OUTPUT_ITEMS:
            self._output(item)

    def _start_response(self) -> None:
        self.turn += 1
        self.in_response = True
        if self.spare_usage is not None:
            self.turn_usage[self.turn] = self.spare_usage
            self.spare_usage = None

    def _end_response(self, stamp: Any) -> None:
        if self.pending:
            self._add(Step(index=0, kind="agent", text="\n\n".join(self.pending)), stamp)
            self.pending = []
        self.in_response = False

    def _message(self, item: _Item, raw: msgspec.Raw, stamp: Any) -> None:
        text = "\n".join(
            str(c.get("text") or "")
            for c in listed(item.content, "message content")
            if isinstance(c, dict)
        )
        role = item.role
        if role == "assistant":
            self.pending.append(text)
            return
        system = role != "user" or text.lstrip().startswith(SYSTEM_PREFIXES)
        kind: StepKind = "system" if system else "user"
        self._add(Step(index=0, kind=kind, text=text, raw=any_decoder.decode(raw)), stamp)

    def _call(self, item: _Item, raw: msgspec.Raw, stamp: Any) -> None:
        name = str(item.name or item.type or "unknown")
        args = _arguments(item)
        view = classify(name, args)
        step = Step(
            index=0,
            kind="tool",
            text="\n\n".join(self.pending),
            tool_name=name,
            category=view.category,
            call_id=_call_id(item.call_id or item.id),
            arguments=args,
            command=view.command,
            files=view.files,
            cwd=_call_folder(args, self.folder),
            raw=any_decoder.decode(raw),  # the item as a dict: the one field that needs it all
        )
        self.pending = []
        self._add(step, stamp)
        if step.call_id:
            self.calls[step.call_id] = step

    def _output(self, item: _Item) -> None:
        step = self.calls.get(str(item.call_id))
        if step is None:
            where = f"line {self.line_number}"
            self.warnings.append(f"{where}: output of unknown call {item.call_id!r} skipped")
            return
        step.observation, step.is_error = _output(item.output)

    def _add(self, step: Step, stamp: Any) -> None:
        step.index = len(self.steps)
        step.timestamp = parse_time(stamp)
        if step.kind in ("agent", "tool"):
            step.turn = self.turn
            step.model = self.model
        self.steps.append(step)

    def trajectory(self, path: Path) -> Trajectory:
        self._end_response(None)
        if self.spare_usage is not None and self.turn >= 0:  # a count after the last response
            self.turn_usage[self.turn] = self.turn_usage.get(self.turn, Usage()) + self.spare_usage
        firsts: dict[int, Step] = {}
        for step in self.steps:
            if step.turn is not None:
                firsts.setdefault(step.turn, step)
        for turn, usage in self.turn_usage.items():
            if turn in firsts:
                firsts[turn].usage = usage
        meta = {
            k: v for k, v in self.meta.items() if k not in ("instructions", "base_instructions")
        }
        version = self.meta.get("cli_version")
        if type(version) is not str and version is not None:
            version = scalar_text(version, "session_meta cli_version")
        trajectory = Trajectory(
            id=str(self.meta.get("id") or path.stem),
            task=self.task,
            agent=Agent(name="codex", version=version),
            model=self.model,
            source=Source(
                format=CodexRolloutReader.name,
                path=str(path),
                format_version=version,
            ),
            steps=self.steps,
            reported_usage=self.earlier + self.total if self.total else None,
            metadata=meta,
        )
        if self.warnings:
            trajectory.add_warnings(self.warnings)
        return trajectory


def _arguments(item: _Item) -> dict[str, Any]:
    if item.type == "custom_tool_call":
        return {"input": item.input}
    raw = item.arguments
    if isinstance(raw, dict):
        return raw
    if isinstance(item.action, dict):
        return dict(item.action)
    if not isinstance(raw, str) or not raw.lstrip().startswith("{"):
        return {"raw": raw}  # not an object (e.g. `[REDACTED_ARGUMENTS ...]`): skip the raise
    try:
        parsed = orjson.loads(raw)
    except orjson.JSONDecodeError:
        parsed = None
    return parsed if isinstance(parsed, dict) else {"raw": raw}


def _call_folder(args: dict[str, Any], turn_folder: str | None) -> str | None:
    """Where a call starts: its own `workdir`, relative to the turn's folder, else that folder."""
    named = args.get("workdir", args.get("working_directory"))
    if named is None:
        return turn_folder
    if type(named) is str and turn_folder is not None and not named.startswith("/"):
        named = resolve(named, turn_folder)
    return working_folder(named)


def _output(output: Any) -> tuple[str, bool | None]:
    """0.40 wraps shell output as JSON `{output, metadata{exit_code}}`; 0.104 writes plain text."""
    if isinstance(output, dict):
        output = orjson.dumps(output).decode()
    text = str(output or "")
    if text.startswith("{"):
        try:
            wrapped = orjson.loads(text)
        except orjson.JSONDecodeError:
            wrapped = None
        if isinstance(wrapped, dict) and "output" in wrapped:
            code = (wrapped.get("metadata") or {}).get("exit_code")
            return str(wrapped["output"]), (code != 0) if isinstance(code, int) else None
    match = EXIT_CODE.search(text[:500])
    return text, (int(match[1]) != 0) if match else None


def _call_id(value: Any) -> str | None:
    return value if type(value) is str else scalar_text(value, "call_id")


def _minus(a: Usage, b: Usage) -> Usage:
    return Usage(
        prompt_tokens=a.prompt_tokens - b.prompt_tokens,
        completion_tokens=a.completion_tokens - b.completion_tokens,
        cached_tokens=a.cached_tokens - b.cached_tokens,
    )
