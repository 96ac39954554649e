"""OpenAI chat messages -> canonical steps: each tool call becomes one `tool` step whose observation
is the `role: tool` message with the same `tool_call_id`; parallel calls share a `turn`."""

from __future__ import annotations

from typing import Any

import orjson

from agentlens.formats._tool_table import tool_category
from agentlens.trajectory import Step

KINDS = {"system": "system", "developer": "system", "user": "user", "assistant": "agent"}


def messages_to_steps(messages: list[dict[str, Any]]) -> list[Step]:
    steps: list[Step] = []
    pending: dict[str, Step] = {}
    for turn, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            _attach_result(message, pending, steps, turn)
            continue
        text = content_text(message.get("content"))
        calls = message.get("tool_calls") if role == "assistant" else None
        if not calls:
            kind = KINDS.get(str(role), "user")
            steps.append(Step(index=len(steps), kind=kind, text=text, turn=turn))  # type: ignore[arg-type]
            continue
        for i, call in enumerate(calls):
            step = _call_step(call, len(steps), turn, text if i == 0 else "")
            steps.append(step)
            if step.call_id:
                pending[step.call_id] = step
    return steps


def content_text(content: Any) -> str:
    """Text of a message `content`: a string, or the text parts of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
        )
    return ""


def _call_step(call: Any, index: int, turn: int, text: str) -> Step:
    function = call.get("function") if isinstance(call, dict) else None
    function = function if isinstance(function, dict) else {}
    name = str(function.get("name") or "unknown")
    args = _arguments(function.get("arguments"))
    category, command, files = tool_category(name, args)
    return Step(
        index=index,
        kind="tool",
        text=text,
        turn=turn,
        tool_name=name,
        category=category,
        call_id=call.get("id") if isinstance(call, dict) else None,
        arguments=args,
        command=command,
        files=files,
    )


def _attach_result(
    message: dict[str, Any], pending: dict[str, Step], steps: list[Step], turn: int
) -> None:
    text = content_text(message.get("content"))
    step = pending.pop(str(message.get("tool_call_id")), None)
    if step is None:  # a result without its call (e.g. the call was trimmed from the log)
        step = Step(index=len(steps), kind="tool", turn=turn, tool_name=message.get("name"))
        step.call_id = message.get("tool_call_id")
        steps.append(step)
    step.observation = text


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str) and raw.strip():
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {"_raw": raw}
        return value if isinstance(value, dict) else {"_value": value}
    return {}
