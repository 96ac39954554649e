"""OTLP/JSON spans decoded, and the two GenAI attribute conventions read into one shape.

OTLP/JSON (the collector's file exporter, or an SDK's `ExportTraceServiceRequest` as JSON) nests
`resourceSpans[].scopeSpans[].spans[]`; an attribute is `{key, value: {stringValue | intValue
(a string) | doubleValue | boolValue | arrayValue | kvlistValue}}`. Two conventions name what an
AI span did:
* OpenTelemetry GenAI (`gen_ai.operation.name`: `chat`, `execute_tool`, `invoke_agent`;
  `gen_ai.usage.input_tokens`, `gen_ai.tool.call.arguments`, `gen_ai.input.messages`, ...), with
  OpenLLMetry's indexed `gen_ai.prompt.<i>.*` / `gen_ai.completion.<i>.*` messages;
* OpenInference (Phoenix): `openinference.span.kind` `LLM`/`TOOL`/`AGENT`, `llm.token_count.*`,
  `llm.output_messages.<i>.message.tool_calls.<j>.tool_call.*`, `tool.name`, `input.value`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from agentlens.formats._json import ShapeError, arr, obj

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"\s*")
_SEPARATOR = re.compile(r"\s*,?\s*")
LLM_OPERATIONS = {"chat", "text_completion", "generate_content", "completion"}
AGENT_OPERATIONS = {"invoke_agent", "create_agent"}
ERROR_CODES = {2, "2", "STATUS_CODE_ERROR"}


@dataclass
class Span:
    trace: str
    span_id: str
    parent: str | None
    name: str
    start: int
    attrs: dict[str, Any]
    error: str | None  # the status message of a failed span ("" when it gave none)
    resource: dict[str, Any] = field(default_factory=dict)
    end: int = 0

    @property
    def kind(self) -> str:
        """`llm`, `tool`, `agent` or `other`."""
        marked = str(self.attrs.get("openinference.span.kind", "")).upper()
        operation = self.attrs.get("gen_ai.operation.name")
        if marked == "LLM" or operation in LLM_OPERATIONS:
            return "llm"
        if marked == "TOOL" or operation == "execute_tool":
            return "tool"
        if marked == "AGENT" or operation in AGENT_OPERATIONS:
            return "agent"
        return "other"


@dataclass
class ToolCall:
    call_id: str | None
    name: str
    arguments: Any


def spans_of(document: Any, where: str) -> list[Span]:
    spans = []
    for r, resource in enumerate(arr(obj(document, where).get("resourceSpans"), where)):
        at = f"{where}.resourceSpans[{r}]"
        resource = obj(resource, at)
        shared = attributes(obj(resource.get("resource"), at).get("attributes"), at)
        for s, scope in enumerate(arr(resource.get("scopeSpans"), at)):
            for i, raw in enumerate(arr(obj(scope, at).get("spans"), at)):
                spans.append(_span(obj(raw, f"{at}.scopeSpans[{s}].spans[{i}]"), shared))
    return spans


def _span(raw: dict[str, Any], resource: dict[str, Any]) -> Span:
    status = obj(raw.get("status"), "status")
    failed = status.get("code") in ERROR_CODES
    return Span(
        trace=str(raw.get("traceId") or ""),
        span_id=str(raw.get("spanId") or ""),
        parent=str(raw["parentSpanId"]) if raw.get("parentSpanId") else None,
        name=str(raw.get("name") or ""),
        start=_int(raw.get("startTimeUnixNano")),
        end=_int(raw.get("endTimeUnixNano")),
        attrs=attributes(raw.get("attributes"), "attributes"),
        error=str(status.get("message") or "") if failed else None,
        resource=resource,
    )


def attributes(raw: Any, where: str) -> dict[str, Any]:
    found = {}
    for item in arr(raw, where):
        item = obj(item, where)
        found[str(item.get("key"))] = _value(obj(item.get("value"), where))
    return found


def _value(value: dict[str, Any]) -> Any:
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return _int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [_value(obj(v, "arrayValue")) for v in arr(value["arrayValue"].get("values"), "")]
    if "kvlistValue" in value:
        return attributes(value["kvlistValue"].get("values"), "kvlistValue")
    return None


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        return 0
    try:
        return int(value)
    except ValueError:
        raise ShapeError(f"{value!r:.40} should be a whole number") from None


def model_of(span: Span) -> str | None:
    for key in ("llm.model_name", "gen_ai.response.model", "gen_ai.request.model"):
        if isinstance(span.attrs.get(key), str):
            return str(span.attrs[key])
    return None


def tokens_of(span: Span) -> tuple[int, int, int] | None:
    """(input, output, cache-read) tokens of an LLM span, or None when it names none."""
    a = span.attrs
    prompt = a.get("llm.token_count.prompt", a.get("gen_ai.usage.input_tokens"))
    completion = a.get("llm.token_count.completion", a.get("gen_ai.usage.output_tokens"))
    cached = a.get(
        "llm.token_count.prompt_details.cache_read",
        a.get(
            "gen_ai.usage.cache_read.input_tokens", a.get("gen_ai.usage.cache_read_input_tokens")
        ),
    )
    if prompt is None and completion is None:
        return None
    return int(prompt or 0), int(completion or 0), int(cached or 0)


def output_of(span: Span) -> tuple[str, list[ToolCall]]:
    """The text and tool calls of an LLM span's first output message."""
    a = span.attrs
    if isinstance(a.get("gen_ai.output.messages"), str):
        return _semconv_message(a["gen_ai.output.messages"])
    for prefix in ("llm.output_messages.0.message.", "gen_ai.completion.0."):
        calls = _indexed_calls(a, prefix)
        content = a.get(prefix + "content")
        if calls or content is not None:
            return (str(content) if content is not None else ""), calls
    return "", []


def _indexed_calls(a: dict[str, Any], prefix: str) -> list[ToolCall]:
    calls = []
    for j in range(1000):
        oi = f"{prefix}tool_calls.{j}.tool_call."
        ll = f"{prefix}tool_calls.{j}."
        if oi + "function.name" in a:
            calls.append(
                ToolCall(
                    a.get(oi + "id"), str(a[oi + "function.name"]), a.get(oi + "function.arguments")
                )
            )
        elif ll + "name" in a:
            calls.append(ToolCall(a.get(ll + "id"), str(a[ll + "name"]), a.get(ll + "arguments")))
        else:
            return calls
    return calls


def _semconv_message(text: str) -> tuple[str, list[ToolCall]]:
    messages = loads(text)
    first = (
        obj(messages[0], "gen_ai.output.messages[0]")
        if isinstance(messages, list) and messages
        else {}
    )
    said, calls = [], []
    for part in arr(first.get("parts"), "parts"):
        part = obj(part, "part")
        if part.get("type") == "text":
            said.append(str(part.get("content") or ""))
        elif part.get("type") == "tool_call":
            calls.append(
                ToolCall(part.get("id"), str(part.get("name") or "unknown"), part.get("arguments"))
            )
    return "\n".join(said), calls


def first_user_text(span: Span) -> str | None:
    return next((text for role, text in input_messages(span) if role == "user"), None)


def system_texts(span: Span) -> list[str]:
    """The text parts of an LLM span's `gen_ai.system_instructions`, one per system message."""
    raw = span.attrs.get("gen_ai.system_instructions")
    parts = arr(loads(raw), "gen_ai.system_instructions") if isinstance(raw, str) else []
    return [str(obj(p, "part").get("content") or "") for p in parts]


def new_user_texts(span: Span) -> list[str]:
    """The user messages of an LLM span's input when it holds only what is new (no assistant
    message: `convert --to otel`, or an API call that sends only the new turn); [] when it
    is the whole conversation again, whose user messages earlier spans already gave. The
    scan stops at the first assistant message: a full-history input has one near its start,
    and decoding all of every span's input made a long session's read quadratic."""
    users = []
    for role, text in input_messages(span):
        if role == "assistant":
            return []
        if role == "user":
            users.append(text)
    return users


def input_messages(span: Span) -> Iterator[tuple[str, str]]:
    """(role, text) of an LLM span's input messages, in either convention, decoded one by one
    as the caller asks for them."""
    a = span.attrs
    if isinstance(a.get("gen_ai.input.messages"), str):
        for message in _array_items(a["gen_ai.input.messages"], "gen_ai.input.messages"):
            message = obj(message, "message")
            parts = arr(message.get("parts"), "parts")
            text = "\n".join(str(obj(p, "part").get("content") or "") for p in parts)
            yield str(message.get("role")), text
        return
    for prefix in ("llm.input_messages.{}.message.", "gen_ai.prompt.{}."):
        if a.get(prefix.format(0) + "role") is None:
            continue
        for i in range(1000):
            role = a.get(prefix.format(i) + "role")
            if role is None:
                return
            yield str(role), str(a.get(prefix.format(i) + "content") or "")
        return


def _array_items(text: str, where: str) -> Iterator[Any]:
    """The items of a JSON array, decoded one at a time: a caller that stops early does not pay
    for the rest. Not an array: as `arr`; broken part way: the items before the break."""
    at = _past(_SPACE, text, 0)
    if not text.startswith("[", at):
        yield from arr(loads(text), where)
        return
    at = _past(_SPACE, text, at + 1)
    while at < len(text) and text[at] != "]":
        try:
            item, at = _DECODER.raw_decode(text, at)
        except (ValueError, RecursionError):
            return
        yield item
        at = _past(_SEPARATOR, text, at)


def _past(pattern: re.Pattern[str], text: str, at: int) -> int:
    matched = pattern.match(text, at)
    return matched.end() if matched else at


def tool_run(span: Span) -> tuple[str, str | None, Any, str | None]:
    """(name, call id, arguments, result) of a tool span."""
    a = span.attrs
    name = a.get("gen_ai.tool.name") or a.get("tool.name") or span.name
    call_id = a.get("gen_ai.tool.call.id") or a.get("tool_call.id")
    arguments = a.get("gen_ai.tool.call.arguments", a.get("input.value"))
    result = a.get("gen_ai.tool.call.result", a.get("output.value"))
    return (
        str(name),
        (str(call_id) if call_id else None),
        arguments,
        (None if result is None else str(result)),
    )


def arguments_dict(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        parsed = loads(raw)
        return parsed if isinstance(parsed, dict) else {"input": raw}
    return {} if raw is None else {"input": raw}


def loads(text: Any) -> Any:
    """A JSON value written as a string attribute; None when it is not a string or not JSON."""
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None
