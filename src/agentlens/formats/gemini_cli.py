"""Gemini CLI session JSON: `{sessionId, projectHash, startTime, lastUpdated, messages[]}`.

A message is `type: user` or `type: gemini`. A gemini message may carry `toolCalls[]`, each with
its own `result[].functionResponse.response.{output|error}` and a `status`, so a call and its
observation arrive together; a response's `content` (or, when it said nothing, its `thoughts`)
becomes the text of its first call, or of an `agent` step when it made none. `tokens` is per
message (not cumulative); `thoughts` tokens are billed as output, so they count towards
`completion_tokens`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from agentlens.formats._json import ReadGuard, arr, count, loads, obj, require, text
from agentlens.formats._reader_base import SuffixReader
from agentlens.formats._steps import call_arguments, parse_time
from agentlens.formats._tool_table import tool_category
from agentlens.trajectory import Agent, Source, Step, StepKind, Trajectory, Usage


class GeminiCliReader(SuffixReader):
    name: ClassVar[str] = "gemini-cli"
    suffixes: ClassVar[tuple[str, ...]] = (".json",)

    @classmethod
    def handles_bytes(cls, head: bytes) -> bool:
        start = head[:2048]
        return b'"sessionId"' in start and b'"messages"' in head and b'"projectHash"' in start

    def read(self, path: Path, data: bytes) -> Iterator[Trajectory]:
        doc = require(path, self.name, loads(path, data, self.name), dict, "top level")
        messages = require(path, self.name, doc.get("messages"), list, "'messages'")
        steps: list[Step] = []
        for turn, message in enumerate(messages):
            require(path, self.name, message, dict, f"messages[{turn}]")
            with ReadGuard(path, self.name):
                steps.extend(_message_steps(message, turn, start=len(steps)))
        models = [s.model for s in steps if s.model]
        first_user = next((s.text for s in steps if s.kind == "user"), None)
        yield Trajectory(
            id=_session_id(path, doc),
            task=first_user,
            agent=Agent(name="gemini-cli"),
            model=models[0] if models else None,
            source=Source(format=self.name, path=str(path)),
            steps=steps,
            metadata={k: doc[k] for k in ("projectHash", "startTime", "lastUpdated") if k in doc},
        )


def _message_steps(message: dict[str, Any], turn: int, start: int) -> list[Step]:
    """The steps of one session message (shared with the JSONL session reader)."""
    said = _text(message.get("content"))
    when = parse_time(message.get("timestamp"))
    if message.get("type") != "gemini":
        kind: StepKind = "user" if message.get("type") == "user" else "system"
        return [Step(index=start, kind=kind, text=said, turn=turn, timestamp=when, raw=message)]
    where = f"messages[{turn}]"
    calls = arr(message.get("toolCalls"), f"{where}.toolCalls")
    thoughts = " ".join(
        str(t.get("description") or "")
        for t in arr(message.get("thoughts"), f"{where}.thoughts")
        if isinstance(t, dict)
    )
    model = text(message.get("model"), f"{where}.model")
    common: dict[str, Any] = {"turn": turn, "timestamp": when, "model": model}
    first = said or thoughts  # a response that only thought before its calls keeps its reasoning
    if not calls:
        steps = [Step(index=start, kind="agent", text=first, **common)]
    else:
        steps = [
            _tool_step(
                call, f"{where}.toolCalls[{i}]", start + i, first if i == 0 else "", **common
            )
            for i, call in enumerate(calls)
        ]
    steps[0].usage = _usage(message.get("tokens"), f"{where}.tokens")
    steps[0].raw = message
    return steps


message_steps = _message_steps


def _tool_step(raw: Any, where: str, index: int, said: str, **common: Any) -> Step:
    call = obj(raw, where)
    name = text(call.get("name"), f"{where}.name") or "unknown"
    args = call_arguments(call.get("args"))
    category, command, files = tool_category(name, args)
    output, is_error = _result(call, where)
    if call.get("status") not in (None, "success"):
        is_error = True
    return Step(
        index=index,
        kind="tool",
        text=said,
        tool_name=name,
        category=category,
        call_id=text(call.get("id"), f"{where}.id"),
        arguments=args,
        command=command,
        files=files,
        observation=output,
        is_error=is_error,
        **common,
    )


def _result(call: dict[str, Any], where: str) -> tuple[str | None, bool]:
    parts: list[str] = []
    is_error = False
    for i, item in enumerate(arr(call.get("result"), f"{where}.result")):
        at = f"{where}.result[{i}]"
        function = obj(obj(item, at).get("functionResponse"), f"{at}.functionResponse")
        response = obj(function.get("response"), f"{at}.functionResponse.response")
        if "error" in response:
            is_error = True
            parts.append(str(response["error"]))
        elif "output" in response:
            parts.append(str(response["output"]))
    if not parts and call.get("resultDisplay"):
        parts.append(str(call["resultDisplay"]))
    return ("\n".join(parts) if parts else None), is_error


def _usage(tokens: Any, where: str) -> Usage | None:
    if not isinstance(tokens, dict):
        return None
    return Usage(
        prompt_tokens=count(tokens.get("input"), f"{where}.input"),
        completion_tokens=count(tokens.get("output"), f"{where}.output")
        + count(tokens.get("thoughts"), f"{where}.thoughts"),
        cached_tokens=count(tokens.get("cached"), f"{where}.cached"),
    )


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_part_text(p) for p in content if isinstance(p, dict))
    return ""


def _part_text(part: dict[str, Any]) -> str:
    """A content part's text; a media part (`inlineData`, `fileData`) is named, not dropped."""
    if "text" in part or not part:
        return str(part.get("text", ""))
    return f"[{next(iter(part))}]"


def _session_id(path: Path, doc: dict[str, Any]) -> str:
    with ReadGuard(path, GeminiCliReader.name):
        return text(doc.get("sessionId"), "'sessionId'") or path.stem
