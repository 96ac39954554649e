"""OTLP/JSON attribute values decoded, each attribute the OTel reader consults held to the type
it reads it as.

An attribute is `{key, value: {stringValue | intValue (a string) | doubleValue | boolValue |
arrayValue | kvlistValue}}`. A value of a type the reader cannot use for its key (an operation
name given as a list, a token count as a kvlist), or an encoding that is not one (`intValue:
"seven"`, `arrayValue: []`), is read as absent and noted in `odd` (key -> what it was), so the
reader can say so once per file: a sloppy exporter costs that attribute, never the trace. A
malformed attribute the reader does not consult (`consulted`) costs nothing, and is not named.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

from agentlens.formats._json import arr, obj

ODD = object()  # a value a check refuses: read as absent
# an int64 has 19 digits; Python will not make an int of text of more than 4300 (ValueError)
_WHOLE = re.compile(r"\s*[+-]?[0-9]{1,100}\s*")
_NUMBER = re.compile(r"\s*[+-]?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?\s*")


class _Malformed(Exception):
    """An OTLP value that is not one of its encodings."""


def attributes(raw: Any, where: str, odd: dict[str, str] | None = None) -> dict[str, Any]:
    """The attributes as Python values, each that the reader consults of the type it reads it
    as; what was refused (of those it consults) is noted in `odd`. `attributes` that is not a
    list of objects (no attribute to name) rejects the file."""
    found = {}
    for item in arr(raw, where):
        item = obj(item, where)
        key = str(item.get("key"))
        try:
            value = _value(item.get("value"))
        except _Malformed as exc:
            if consulted(key):  # another is no loss: naming it would be noise
                _note(odd, key, str(exc))
            continue
        checked = _check(key, value)
        if checked is ODD:
            _note(odd, key, _type_name(value))
        elif checked is not None:  # a null value is no value
            found[key] = checked
    return found


def _note(odd: dict[str, str] | None, key: str, what: str) -> None:
    if odd is not None:
        odd.setdefault(key, what)


def _value(value: Any) -> Any:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _Malformed("not an OTLP value")
    if "stringValue" in value:
        return _string(value["stringValue"])
    if "intValue" in value:
        return _int(value["intValue"])
    if "doubleValue" in value:
        return _double(value["doubleValue"])
    if "boolValue" in value:
        return _bool(value["boolValue"])
    if "arrayValue" in value:
        return [_value(v) for v in _values(value["arrayValue"], "arrayValue")]
    if "kvlistValue" in value:
        items = _values(value["kvlistValue"], "kvlistValue")
        return {str(_item(i).get("key")): _value(_item(i).get("value")) for i in items}
    return None


def _values(value: Any, kind: str) -> list[Any]:
    found = value.get("values") if isinstance(value, dict) else ODD
    if found is None or isinstance(found, list):
        return found or []
    raise _Malformed(f"malformed {kind}")


def _item(item: Any) -> dict[str, Any]:
    if isinstance(item, dict):
        return item
    raise _Malformed("malformed kvlistValue")


def _string(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise _Malformed("malformed stringValue")


def _int(value: Any) -> int | None:
    number = whole(value)
    if number is None and value is not None:
        raise _Malformed("malformed intValue")
    return number


def _double(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise _Malformed("malformed doubleValue")
    try:
        return float(value)  # OTLP/JSON writes NaN and the infinities as strings
    except (ValueError, OverflowError):
        raise _Malformed("malformed doubleValue") from None


def _bool(value: Any) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise _Malformed("malformed boolValue")


def whole(value: Any) -> int | None:
    """A whole number: `intValue` is one written as text or as a JSON number, which protobuf's
    JSON mapping lets carry a zero fraction or an exponent (`7.0`, `"7e2"`); None when `value`
    is not one."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        if _WHOLE.fullmatch(value):
            return int(value)
        value = float(value) if _NUMBER.fullmatch(value) else None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def _text(value: Any) -> Any:
    return value if isinstance(value, str) else ODD


def _label(value: Any) -> Any:
    """A name or version: text, or a number written as one."""
    plain = isinstance(value, str | int | float) and not isinstance(value, bool)
    return str(value) if plain else ODD


def _flag(value: Any) -> Any:
    return value if isinstance(value, bool) else ODD


def _count(value: Any) -> Any:
    """A token count: a whole number at least 0 (a double with no fraction, or decimal text,
    as some exporters write one)."""
    number = whole(value)
    return number if number is not None and number >= 0 else ODD


def _number(value: Any) -> Any:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return value if ok and math.isfinite(value) else ODD


def _result(value: Any) -> Any:
    """A tool's result: text, or another value kept as its JSON text."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


_TEXT = (
    "openinference.span.kind", "gen_ai.operation.name", "llm.model_name", "gen_ai.response.model",
    "gen_ai.request.model", "gen_ai.output.messages", "gen_ai.input.messages",
    "gen_ai.system_instructions", "gen_ai.tool.name", "tool.name", "gen_ai.tool.call.id",
    "tool_call.id", "gen_ai.agent.name", "agent.name", "service.name",
    "agentlens.subtrajectory", "agentlens.step.observation", "agentlens.tool.files",
    "agentlens.tool.category", "agentlens.tool.command", "agentlens.messages_after",
    "agentlens.messages.order", "agentlens.user.timestamps", "agentlens.system.timestamps",
    "agentlens.user.subtrajectories", "agentlens.system.subtrajectories", "agentlens.metadata",
    "agentlens.trajectory.id", "agentlens.task.id", "agentlens.parent_id", "agentlens.task",
    "agentlens.outcome", "agentlens.outcome.source", "agentlens.outcome.detail",
    "agentlens.step.timestamp",
)  # fmt: skip
_FLAGS = (
    "agentlens.error_known", "agentlens.step.is_error", "agentlens.task_is_no_step",
    "agentlens.subagent", "agentlens.end_synthetic", "agentlens.start_synthetic",
)  # fmt: skip
_COUNTS = (
    "llm.token_count.prompt", "llm.token_count.completion",
    "llm.token_count.prompt_details.cache_read", "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens", "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_read_input_tokens", "agentlens.reported_usage.input_tokens",
    "agentlens.reported_usage.output_tokens", "agentlens.reported_usage.cache_read.input_tokens",
)  # fmt: skip
CHECKS: dict[str, Callable[[Any], Any]] = {
    **dict.fromkeys(_TEXT, _text),
    **dict.fromkeys(_FLAGS, _flag),
    **dict.fromkeys(_COUNTS, _count),
    "gen_ai.agent.version": _label,
    "agentlens.cost_usd": _number,
    "agentlens.reported_cost_usd": _number,
    "gen_ai.tool.call.result": _result,
    "output.value": _result,
}
# the messages' roles, texts and the first output message's calls, in either convention
INDEXED = re.compile(
    r"(?:llm\.input_messages\.\d+\.message\.|gen_ai\.prompt\.\d+\.)(?:role|content)"
    r"|llm\.output_messages\.0\.message\."
    r"(?:content|tool_calls\.\d+\.tool_call\.(?:id|function\.name))"
    r"|gen_ai\.completion\.0\.(?:content|tool_calls\.\d+\.(?:id|name))"
)
# the arguments of a tool span and of a response's calls: read whatever their type
ARGUMENTS = ("gen_ai.tool.call.arguments", "input.value")
INDEXED_ARGUMENTS = re.compile(
    r"llm\.output_messages\.0\.message\.tool_calls\.\d+\.tool_call\.function\.arguments"
    r"|gen_ai\.completion\.0\.tool_calls\.\d+\.arguments"
)


def consulted(key: str) -> bool:
    """Whether the reader reads an attribute of this name."""
    if key in CHECKS or key in ARGUMENTS:
        return True
    return bool(INDEXED.fullmatch(key) or INDEXED_ARGUMENTS.fullmatch(key))


def _check(key: str, value: Any) -> Any:
    check = CHECKS.get(key)
    if check is not None:
        return check(value) if value is not None else None
    # the indexed keys are texts: only a value of another type needs the (slower) match
    indexed = not isinstance(value, str | None) and key.startswith(("llm.", "gen_ai."))
    return ODD if indexed and INDEXED.fullmatch(key) else value


def _type_name(value: Any) -> str:
    """The OTLP name of a decoded value's type."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "kvlist"
