"""OTLP/JSON spans decoded, and the two GenAI attribute conventions read into one shape.

OTLP/JSON (the collector's file exporter, or an SDK's `ExportTraceServiceRequest` as JSON) nests
`resourceSpans[].scopeSpans[].spans[]`; an attribute is `{key, value: {stringValue | intValue
(a string) | doubleValue | boolValue | arrayValue | kvlistValue}}` (`_otel_values`: one of a
type the reader cannot use is read as absent and noted in `Span.odd`). Two conventions name
what an AI span did:
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

from agentlens.formats._json import arr, json_type, obj
from agentlens.formats._otel_values import attributes, whole

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"\s*")
_SEPARATOR = re.compile(r"\s*,?\s*")
LLM_OPERATIONS = {"chat", "text_completion", "generate_content", "completion"}
AGENT_OPERATIONS = {"invoke_agent", "create_agent"}
# OTLP's `Status.code` is an enum: OTLP/JSON gives its number or its name
STATUS_CODES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
ERROR = STATUS_CODES["STATUS_CODE_ERROR"]


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
    # attributes read as absent: what each was (a resource's, on the first of its spans only)
    odd: dict[str, str] = field(default_factory=dict)

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

    def has(self, key: str) -> bool:
        """Whether the span gives `key`, of a type the reader can use or not."""
        return key in self.attrs or key in self.odd


@dataclass
class ToolCall:
    call_id: str | None
    name: str
    arguments: Any


def spans_of(document: Any, where: str) -> list[Span]:
    spans: list[Span] = []
    for r, resource in enumerate(arr(obj(document, where).get("resourceSpans"), where)):
        at = f"{where}.resourceSpans[{r}]"
        resource = obj(resource, at)
        odd: dict[str, str] = {}
        shared = attributes(obj(resource.get("resource"), at).get("attributes"), at, odd)
        first = len(spans)
        for s, scope in enumerate(arr(resource.get("scopeSpans"), at)):
            for i, raw in enumerate(arr(obj(scope, at).get("spans"), at)):
                spans.append(_span(obj(raw, f"{at}.scopeSpans[{s}].spans[{i}]"), shared))
        if first < len(spans):  # on one span: the file's warning names each once anyway
            spans[first].odd.update(odd)
    return spans


def _span(raw: dict[str, Any], resource: dict[str, Any]) -> Span:
    odd: dict[str, str] = {}
    status = _status(raw.get("status"), odd)
    failed = _code(status, odd) == ERROR
    return Span(
        trace=_id(raw, "traceId", odd),
        span_id=_id(raw, "spanId", odd),
        parent=_id(raw, "parentSpanId", odd) or None,
        name=_id(raw, "name", odd),
        start=_nanos(raw, "startTimeUnixNano", odd),
        end=_nanos(raw, "endTimeUnixNano", odd),
        attrs=attributes(raw.get("attributes"), "attributes", odd),
        error=_text_of(status, "message", odd, "status.") if failed else None,
        resource=resource,
        odd=odd,
    )


def _status(raw: Any, odd: dict[str, str]) -> dict[str, Any]:
    """The span's status (none when it is not an object, noted in `odd`)."""
    if raw is not None and not isinstance(raw, dict):
        odd["status"] = json_type(raw)
        return {}
    return raw or {}


def _code(status: dict[str, Any], odd: dict[str, str]) -> int | None:
    """The status code, from its name or its number in any form an int takes in OTLP/JSON
    (`2`, `2.0`, `"2"`: exporters write each); one that is no status code (`7`, `"ERROR"`, a
    list) reads as none, so not as an error, noted in `odd`."""
    value = status.get("code")
    code = STATUS_CODES.get(value) if isinstance(value, str) else None
    code = whole(value) if code is None else code
    if value is None or code in STATUS_CODES.values():
        return code
    plain = isinstance(value, int | float | str) and not isinstance(value, bool)
    odd["status.code"] = "no status code" if plain else json_type(value)
    return None


def _id(raw: dict[str, Any], key: str, odd: dict[str, str]) -> str:
    """An id or name: text ("" when absent or of another type, noted in `odd`)."""
    return _text_of(raw, key, odd, "")


def _text_of(raw: dict[str, Any], key: str, odd: dict[str, str], prefix: str) -> str:
    value = raw.get(key)
    if value is None or isinstance(value, str):
        return value or ""
    odd[prefix + key] = json_type(value)
    return ""


def _nanos(raw: dict[str, Any], key: str, odd: dict[str, str]) -> int:
    """A time in nanoseconds since the epoch (0 when absent or not a time, noted in `odd`)."""
    value = whole(raw.get(key))
    if value is None or not 0 <= value < 2**64:  # fixed64 in OTLP
        if raw.get(key) is not None:
            odd[key] = json_type(raw.get(key))
        return 0
    return int(value)


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
        return _semconv_message(span)
    for prefix in ("llm.output_messages.0.message.", "gen_ai.completion.0."):
        calls = _indexed_calls(span, prefix)
        content = a.get(prefix + "content")
        if calls or content is not None:
            return (str(content) if content is not None else ""), calls
    return "", []


def _indexed_calls(span: Span, prefix: str) -> list[ToolCall]:
    """The calls `<prefix>tool_calls.<j>.*` in either convention; a name read as absent (of
    an odd type) is `unknown`, so the calls after it are still read."""
    calls: list[ToolCall] = []
    for j in range(1000):
        oi = f"{prefix}tool_calls.{j}.tool_call."
        ll = f"{prefix}tool_calls.{j}."
        if span.has(oi + "function.name"):
            call = ToolCall(
                span.attrs.get(oi + "id"), _name(span, oi + "function.name"),
                span.attrs.get(oi + "function.arguments"),
            )  # fmt: skip
        elif span.has(ll + "name"):
            call = ToolCall(
                span.attrs.get(ll + "id"),
                _name(span, ll + "name"),
                span.attrs.get(ll + "arguments"),
            )
        else:
            return calls
        calls.append(call)
    return calls


def _name(span: Span, key: str) -> str:
    return str(span.attrs.get(key, "unknown"))


def _semconv_message(span: Span) -> tuple[str, list[ToolCall]]:
    key = "gen_ai.output.messages"
    messages = loads(span.attrs[key])
    if not isinstance(messages, list):
        _odd_shape(span, key)
    said, calls = [], []
    for part in _parts(span, key, messages[0]) if isinstance(messages, list) and messages else []:
        if part.get("type") == "text":
            said.append(str(part.get("content") or ""))
        elif part.get("type") == "tool_call":
            name = str(part.get("name") or "unknown")
            calls.append(ToolCall(_call_id(part.get("id")), name, part.get("arguments")))
    return "\n".join(said), calls


def _parts(span: Span, key: str, message: Any) -> list[dict[str, Any]]:
    """The parts of a message in the JSON text of attribute `key`; a message or part of
    another shape is passed over and noted on the span (`Span.odd`)."""
    parts = message.get("parts") if isinstance(message, dict) else None
    if not isinstance(message, dict) or not isinstance(parts, list | None):
        _odd_shape(span, key)
        return []
    found = [part for part in parts or [] if isinstance(part, dict)]
    if len(found) != len(parts or []):
        _odd_shape(span, key)
    return found


def _odd_shape(span: Span, key: str) -> None:
    span.odd.setdefault(key, "JSON text of another shape")


def _call_id(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def first_user_text(span: Span) -> str | None:
    return next((text for role, text in input_messages(span) if role == "user"), None)


def system_texts(span: Span) -> list[str]:
    """The text parts of an LLM span's `gen_ai.system_instructions`, one per system message."""
    key = "gen_ai.system_instructions"
    if key not in span.attrs:
        return []
    parts = loads(span.attrs[key])
    found = _parts(span, key, {"parts": parts if isinstance(parts, list) else 0})
    return [str(part.get("content") or "") for part in found]


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
    key = "gen_ai.input.messages"
    if key in a:
        for message in _array_items(span, key):
            text = "\n".join(str(p.get("content") or "") for p in _parts(span, key, message))
            yield str(message.get("role") if isinstance(message, dict) else None), text
        return
    for prefix in ("llm.input_messages.{}.message.", "gen_ai.prompt.{}."):
        if not span.has(prefix.format(0) + "role"):
            continue
        for i in range(1000):
            if not span.has(prefix.format(i) + "role"):
                return
            role = a.get(prefix.format(i) + "role", "unknown")
            yield str(role), str(a.get(prefix.format(i) + "content") or "")
        return


def _array_items(span: Span, key: str) -> Iterator[Any]:
    """The items of the JSON array in the text of attribute `key`, decoded one at a time: a
    caller that stops early does not pay for the rest. Not an array: none (noted on the span);
    broken part way: the items before the break."""
    text = span.attrs[key]
    at = _past(_SPACE, text, 0)
    if not text.startswith("[", at):
        _odd_shape(span, key)
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
