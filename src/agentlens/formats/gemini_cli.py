"""Gemini CLI session JSON: `{sessionId, projectHash, startTime, lastUpdated, messages[]}`.

A message is `type: user` or `type: gemini`. A gemini message may carry `toolCalls[]`, each with
its own `result[].functionResponse.response.{output|error}` and a `status`, so a call and its
observation arrive together. `tokens` is per message (not cumulative); `thoughts` tokens are
billed as output, so they count towards `completion_tokens`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from agentlens.formats._json import loads, require
from agentlens.formats._steps import parse_time
from agentlens.formats._tool_table import tool_category
from agentlens.trajectory import Agent, Source, Step, StepKind, Trajectory, Usage


class GeminiCliReader:
    name: ClassVar[str] = "gemini-cli"

    def __init__(self, *, lenient: bool = False) -> None:
        self.lenient = lenient

    @classmethod
    def handles_location(cls, path: Path) -> bool:
        return path.suffix == ".json"

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
            steps.extend(_message_steps(message, turn, start=len(steps)))
        models = [s.model for s in steps if s.model]
        first_user = next((s.text for s in steps if s.kind == "user"), None)
        yield Trajectory(
            id=str(doc.get("sessionId") or path.stem),
            task=first_user,
            agent=Agent(name="gemini-cli"),
            model=models[0] if models else None,
            source=Source(format=self.name, path=str(path)),
            steps=steps,
            metadata={k: doc[k] for k in ("projectHash", "startTime", "lastUpdated") if k in doc},
        )


def _message_steps(message: dict[str, Any], turn: int, start: int) -> list[Step]:
    text = _text(message.get("content"))
    when = parse_time(message.get("timestamp"))
    if message.get("type") != "gemini":
        kind: StepKind = "user" if message.get("type") == "user" else "system"
        return [Step(index=start, kind=kind, text=text, turn=turn, timestamp=when, raw=message)]
    calls = message.get("toolCalls") or []
    thoughts = " ".join(
        str(t.get("description") or "")
        for t in message.get("thoughts") or []
        if isinstance(t, dict)
    )
    common: dict[str, Any] = {"turn": turn, "timestamp": when, "model": message.get("model")}
    if not calls:
        steps = [Step(index=start, kind="agent", text=text or thoughts, **common)]
    else:
        steps = [
            _tool_step(call, start + i, text if i == 0 else "", **common)
            for i, call in enumerate(calls)
        ]
    steps[0].usage = _usage(message.get("tokens"))
    steps[0].raw = message
    return steps


def _tool_step(call: dict[str, Any], index: int, text: str, **common: Any) -> Step:
    name = str(call.get("name") or "unknown")
    raw_args = call.get("args")
    args: dict[str, Any] = raw_args if isinstance(raw_args, dict) else {}
    category, command, files = tool_category(name, args)
    output, is_error = _result(call)
    if call.get("status") not in (None, "success"):
        is_error = True
    return Step(
        index=index,
        kind="tool",
        text=text,
        tool_name=name,
        category=category,
        call_id=call.get("id"),
        arguments=args,
        command=command,
        files=files,
        observation=output,
        is_error=is_error,
        **common,
    )


def _result(call: dict[str, Any]) -> tuple[str | None, bool]:
    parts: list[str] = []
    is_error = False
    for item in call.get("result") or []:
        response = ((item or {}).get("functionResponse") or {}).get("response") or {}
        if "error" in response:
            is_error = True
            parts.append(str(response["error"]))
        elif "output" in response:
            parts.append(str(response["output"]))
    if not parts and call.get("resultDisplay"):
        parts.append(str(call["resultDisplay"]))
    return ("\n".join(parts) if parts else None), is_error


def _usage(tokens: Any) -> Usage | None:
    if not isinstance(tokens, dict):
        return None
    return Usage(
        prompt_tokens=int(tokens.get("input") or 0),
        completion_tokens=int(tokens.get("output") or 0) + int(tokens.get("thoughts") or 0),
        cached_tokens=int(tokens.get("cached") or 0),
    )


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""
