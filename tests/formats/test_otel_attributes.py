"""A sloppy or hostile OTel exporter costs at most the attributes it got wrong: every attribute
the reader consults (and every one the real files carry), given as each OTLP value type or as a
malformed one, is read or read as absent with one warning naming it, never a rejected trace.
The files: the real OpenInference capture, and a real Claude Code run as `convert --to otel`
writes it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agentlens.formats import read_path
from agentlens.formats._otel_values import CHECKS, consulted
from agentlens.formats.otel import OtelReader
from agentlens.formats.otel_writer import to_otlp
from agentlens.trajectory import Trajectory
from tests.conftest import FORMATS

CAPTURE = Path(__file__).parent / "otel" / "openinference-openai-session.otlp.json"
CLAUDE = FORMATS / "claude-code" / "marot-spotter" / "short.jsonl"
VALUES: dict[str, Any] = {
    "string": {"stringValue": "chat"},
    "json-of-no-shape": {"stringValue": '[5, {"role": [], "parts": 7}, {"parts": [8]}]'},
    "json-object": {"stringValue": '{"parts": [{"type": "text", "content": 1}]}'},
    "int": {"intValue": "7"},
    "negative-int": {"intValue": "-7"},
    "double": {"doubleValue": 1.5},
    "nan": {"doubleValue": "NaN"},
    "bool": {"boolValue": True},
    "array": {"arrayValue": {"values": [{"stringValue": "chat"}]}},
    "kvlist": {"kvlistValue": {"values": [{"key": "k", "value": {"stringValue": "v"}}]}},
    "missing": {},
    "null": None,
    "string-null": {"stringValue": None},
    "not-a-value": 7,
    "malformed-int": {"intValue": "seven"},
    "malformed-double": {"doubleValue": [1]},
    "malformed-bool": {"boolValue": "no"},
    "malformed-array": {"arrayValue": []},
    "malformed-kvlist": {"kvlistValue": {"values": [1]}},
}
UNUSABLE = {"array", "kvlist", "not-a-value", "malformed-int", "malformed-array"}
KEPT_AS_TEXT = CHECKS["output.value"]  # a tool's result: any value, as its JSON text
SPAN_FIELDS = [
    "traceId", "spanId", "parentSpanId", "name", "startTimeUnixNano", "endTimeUnixNano",
    "status", "status.code", "status.message",
]  # fmt: skip
RAW: dict[str, Any] = {
    "string": "2",
    "empty": "",
    "int": 2,
    "huge": 10**30,
    "negative": -5,
    "double": 1.5,
    "bool": True,
    "array": ["x"],
    "object": {"x": 1},
    "null": None,
}


@cache
def _sources() -> dict[str, str]:
    (run,) = read_path(CLAUDE)
    return {
        "openinference-capture": CAPTURE.read_text(),
        "claude-export": json.dumps(to_otlp([run])),
    }


def _spans(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for resource in doc["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            yield from scope["spans"]


def _keys(doc: dict[str, Any]) -> set[str]:
    return {a["key"] for span in _spans(doc) for a in span["attributes"]}


def _with_attribute(base: str, key: str, value: Any) -> bytes:
    """The file with `key` set to `value` on every span (replaced where the span has it)."""
    doc = json.loads(base)
    for span in _spans(doc):
        kept = [a for a in span["attributes"] if a["key"] != key]
        span["attributes"] = [*kept, {"key": key, "value": value}]
    return json.dumps(doc).encode()


def _read(path: Path, data: bytes) -> list[Trajectory]:
    """Read by the reader itself (not `read_path`, which would turn a crash into a failure)."""
    trajectories = list(OtelReader().read(path, data))
    msgspec.json.decode(msgspec.json.encode(trajectories), type=list[Trajectory])  # well typed
    return trajectories


def _absent_notes(trajectories: list[Trajectory]) -> set[str]:
    notes = (n for t in trajectories for n in t.metadata.get("warnings", []))
    return {n for n in notes if "read as absent" in n}


@pytest.mark.parametrize("value", sorted(VALUES))
@pytest.mark.parametrize("source", ["openinference-capture", "claude-export"])
def test_any_attribute_of_any_type_costs_at_most_itself(
    source: str, value: str, tmp_path: Path
) -> None:
    base = _sources()[source]
    path = tmp_path / f"{source}.otlp.json"
    for key in sorted(set(CHECKS) | _keys(json.loads(base))):
        trajectories = _read(path, _with_attribute(base, key, VALUES[value]))
        assert trajectories, key
        notes = _absent_notes(trajectories)
        assert len(notes) <= 1, (key, notes)  # one warning for the file
        assert all(key in note for note in notes), (key, notes)
        if value in UNUSABLE and CHECKS.get(key) not in (None, KEPT_AS_TEXT):
            assert notes, key  # nothing consulted but a tool's result takes a list or a kvlist


@pytest.mark.parametrize("value", sorted(RAW))
@pytest.mark.parametrize("field", SPAN_FIELDS)
def test_any_span_field_of_any_type_costs_at_most_itself(
    field: str, value: str, tmp_path: Path
) -> None:
    path = tmp_path / "capture.otlp.json"
    doc = json.loads(_sources()["openinference-capture"])
    for span in _spans(doc):
        outer, _, inner = field.partition(".")
        if inner:
            span[outer] = {**(span.get(outer) or {}), inner: RAW[value]}
        else:
            span[outer] = RAW[value]
    assert _read(path, json.dumps(doc).encode())


def test_an_operation_name_given_as_a_list_costs_only_itself(
    tmp_path: Path, run_cli: Callable[..., Any]
) -> None:
    """Found by the brief: `gen_ai.operation.name` as an arrayValue made `Span.kind` raise a
    TypeError (a list is unhashable) and the whole file was rejected."""
    path = tmp_path / "capture.otlp.json"
    path.write_bytes(_with_attribute(CAPTURE.read_text(), "gen_ai.operation.name", VALUES["array"]))
    (original,) = read_path(CAPTURE)
    (run,) = _read(path, path.read_bytes())
    assert msgspec.to_builtins(run.steps) == msgspec.to_builtins(original.steps)
    result = run_cli("inspect", str(path))
    assert result.code == 0, result.err
    warnings = [line for line in result.err.splitlines() if line.startswith("warning:")]
    assert warnings == [
        f"warning: {path}: 1 value of a type or shape the reader cannot use, read as absent: "
        "gen_ai.operation.name (array)"
    ]


def test_a_token_count_given_as_text_still_counts(tmp_path: Path) -> None:
    """Some exporters write numbers as strings: a count in decimal text is a count, not odd."""
    path = tmp_path / "capture.otlp.json"
    doc = json.loads(CAPTURE.read_text())
    for span in _spans(doc):
        for attribute in span["attributes"]:
            if attribute["key"] == "llm.token_count.prompt":
                attribute["value"] = {"stringValue": attribute["value"]["intValue"]}
    (original,) = read_path(CAPTURE)
    (run,) = _read(path, json.dumps(doc).encode())
    assert run.usage_total() == original.usage_total()
    assert not _absent_notes([run])


def test_a_file_of_two_traces_warns_once(tmp_path: Path) -> None:
    """The capture and the export in one request: two runs, one warning line for the file."""
    from agentlens.formats.stream import read_paths

    capture, export = (json.loads(text) for text in _sources().values())
    capture["resourceSpans"] += export["resourceSpans"]
    path = tmp_path / "two.otlp.json"
    path.write_bytes(_with_attribute(json.dumps(capture), "llm.model_name", VALUES["kvlist"]))
    result = read_paths([path])
    assert len(result.trajectories) == 2
    assert dict(result.warnings) == {
        f"{path}: 1 value of a type or shape the reader cannot use, read as absent: "
        "llm.model_name (kvlist)": 2
    }


def _odd_resource_file(n: int) -> bytes:
    """The capture's spans copied to `n` (ids made unique), under a resource with `n` odd
    attributes."""
    doc = json.loads(CAPTURE.read_text())
    (resource,) = doc["resourceSpans"]
    spans = list(_spans(doc))
    copies = [{**spans[i % len(spans)], "spanId": f"{i:016x}"} for i in range(n)]
    resource["scopeSpans"] = [{"spans": copies}]
    odd = [{"key": f"gen_ai.prompt.{i}.role", "value": {"intValue": "seven"}} for i in range(n)]
    resource["resource"]["attributes"] += odd
    return json.dumps(doc).encode()


def test_odd_resource_attributes_take_linear_time(tmp_path: Path) -> None:
    """A resource's odd attributes were copied onto each of its spans, and the file's warning
    then walked every copy: N of each took time in N² (40 s for 20k of each, a 2 MB file)."""
    import time

    path = tmp_path / "capture.otlp.json"

    def seconds(data: bytes) -> float:
        runs = []
        for _ in range(3):
            start = time.process_time()
            trajectories = _read(path, data)
            runs.append(time.process_time() - start)
        notes = _absent_notes(trajectories)
        assert any("gen_ai.prompt.0.role (malformed intValue)" in n for n in notes)
        return min(runs)

    ratio = seconds(_odd_resource_file(8000)) / seconds(_odd_resource_file(2000))
    assert ratio < 8, f"4x the attributes took {ratio:.1f}x the time (linear: 4, quadratic: 16)"


def test_a_long_key_or_id_is_cut_in_the_warning_after_its_secret_is_masked(
    tmp_path: Path, run_cli: Callable[..., Any]
) -> None:
    """Keys and span ids come from the file: a 100 kB one made a 100 kB warning line. Cut, it
    must still have its secret masked (the read's redaction pass would miss half a key). (A
    key the reader does not consult, as the one with a secret, is no longer named at all.)"""
    secret = "sk-ant-api03-" + "A7" * 45
    long_key = "k" * 40 + " " + secret + " " + "k" * 100_000
    consulted_key = f"llm.input_messages.{'9' * 100_000}.message.role"
    doc = json.loads(CAPTURE.read_text())
    spans = list(_spans(doc))
    for key in (long_key, consulted_key):
        spans[0]["attributes"].append({"key": key, "value": {"intValue": "seven"}})
    shared_id = "i" * 40 + " " + secret + " " + "i" * 100_000
    spans[1]["spanId"] = spans[2]["spanId"] = shared_id
    spans[3]["parentSpanId"] = shared_id
    path = tmp_path / "capture.otlp.json"
    path.write_text(json.dumps(doc))
    result = run_cli("inspect", str(path))
    assert result.code == 0, result.err
    warnings = [line for line in result.err.splitlines() if line.startswith("warning:")]
    ids, keys = sorted(warnings, key=lambda line: "read as absent" in line)
    assert all(len(line) < 1000 and "A7A7" not in line for line in warnings), warnings
    assert "llm.input_messages.999" in keys and "kkkk" not in keys, keys
    assert "[REDACTED:" in ids, ids


@pytest.mark.parametrize("form", ["number-with-fraction", "number-with-exponent", "exponent-text"])
def test_a_token_count_in_any_json_form_of_an_int64_still_counts(form: str, tmp_path: Path) -> None:
    """OTLP/JSON's int64 (`intValue`) may be a JSON number, with an exponent, quoted or not
    (protobuf's JSON mapping): `726.0`, `7260e-1` and `"7260e-1"` are the count 726, not odd."""
    import re

    doc = json.loads(CAPTURE.read_text())
    for span in _spans(doc):
        for attribute in span["attributes"]:
            if attribute["key"] == "llm.token_count.prompt":
                attribute["value"] = {"intValue": f"@{attribute['value']['intValue']}@"}
    written = {
        "number-with-fraction": r"\g<1>.0",
        "number-with-exponent": r"\g<1>0e-1",
        "exponent-text": r'"\g<1>0e-1"',
    }[form]
    path = tmp_path / "capture.otlp.json"
    path.write_text(re.sub(r'"@([0-9]+)@"', written, json.dumps(doc)))
    (original,) = read_path(CAPTURE)
    (run,) = _read(path, path.read_bytes())
    assert run.usage_total() == original.usage_total()
    assert not _absent_notes([run])


@pytest.mark.parametrize("where", ["intValue", "startTimeUnixNano"])
def test_a_whole_number_of_too_many_digits_costs_only_itself(where: str, tmp_path: Path) -> None:
    """Python refuses to turn text of more than 4300 digits into an int (ValueError): such a
    token count or time failed the file, though an odd value costs only itself."""
    doc = json.loads(CAPTURE.read_text())
    first = next(_spans(doc))
    digits = "1" * 5000
    if where == "intValue":
        first["attributes"].append({"key": "llm.token_count.prompt", "value": {where: digits}})
    else:
        first[where] = digits
    path = tmp_path / "capture.otlp.json"
    path.write_text(json.dumps(doc))
    (run,) = _read(path, path.read_bytes())
    assert len(_absent_notes([run])) == 1


def test_a_warning_names_the_first_five_then_how_many_more(tmp_path: Path) -> None:
    """The warning's list reads as every other cut list (`list_text.first_few`): it said
    `, and 2 more` where the ATIF, conformity and verifier messages say ` (+2 more)`."""
    keys = sorted(k for k, check in CHECKS.items() if check is not KEPT_AS_TEXT)[:7]
    data = CAPTURE.read_text()
    for key in keys:
        data = _with_attribute(data, key, VALUES["kvlist"]).decode()
    (note,) = _absent_notes(_read(tmp_path / "capture.otlp.json", data.encode()))
    assert note.startswith("7 values of a type or shape the reader cannot use, read as absent: ")
    assert note.endswith(" (kvlist) (+2 more)"), note


ERROR_FORMS = [2, 2.0, "2", "2.0", "STATUS_CODE_ERROR"]
OTHER_CODES = [0, 1, 1.0, "1", "STATUS_CODE_OK", "STATUS_CODE_UNSET"]
NO_CODES = {
    "no status code": [7, -2, 2.5, "ERROR", "STATUS_CODE_BOGUS", ""],
    "boolean": [True],
    "array": [[2]],
    "object": [{"code": 2}],
}
STATUS_CASES = [
    *((code, True, None) for code in ERROR_FORMS),
    *((code, False, None) for code in OTHER_CODES),
    *((code, False, what) for what, codes in NO_CODES.items() for code in codes),
]


@pytest.mark.parametrize(("code", "failed", "what"), STATUS_CASES, ids=repr)
def test_a_status_code_reads_in_every_form_otlp_json_gives_it(
    code: Any, failed: bool, what: str | None, tmp_path: Path
) -> None:
    """OTLP's status code is an enum: its number or its name, the number as any OTLP/JSON int
    (`2.0`, `"2"`). A failed tool span whose code was `2.0` read as a success (and was named in
    the warning); one whose code was no status code (`7`, `"ERROR"`) read as a success with no
    warning. Now each error form is an error, and what is no code is absent and warned of."""
    doc = json.loads(CAPTURE.read_text())
    (span,) = (span for span in _spans(doc) if span["status"].get("code") == 2)  # read_file
    span["status"]["code"] = code
    (run,) = _read(tmp_path / "capture.otlp.json", json.dumps(doc).encode())
    (step,) = (step for step in run.steps if step.tool_name == span["name"])
    assert step.is_error is failed
    unusable = "1 value of a type or shape the reader cannot use, read as absent: "
    assert _absent_notes([run]) == ({f"{unusable}status.code ({what})"} if what else set())


def test_a_malformed_attribute_the_reader_does_not_consult_is_not_named(
    tmp_path: Path, run_cli: Callable[..., Any]
) -> None:
    """Every attribute of the real capture that the reader never reads (`llm.invocation_
    parameters`, `llm.tools.0.tool.json_schema`, the resource's `telemetry.sdk.*`, ...) made
    malformed: the warning named each, though none costs the run anything. Now only a
    consulted one (here `llm.model_name`) is named."""
    doc = json.loads(CAPTURE.read_text())
    owners = [*_spans(doc), *(resource["resource"] for resource in doc["resourceSpans"])]
    unread = [a for owner in owners for a in owner["attributes"] if not consulted(a["key"])]
    assert len({a["key"] for a in unread}) >= 20
    for attribute in unread:
        attribute["value"] = VALUES["malformed-int"]
    path = tmp_path / "capture.otlp.json"
    path.write_text(json.dumps(doc))
    (original,) = read_path(CAPTURE)
    (run,) = _read(path, path.read_bytes())
    assert msgspec.to_builtins(run.steps) == msgspec.to_builtins(original.steps)
    assert not _absent_notes([run])
    path.write_bytes(_with_attribute(path.read_text(), "llm.model_name", VALUES["malformed-int"]))
    result = run_cli("inspect", str(path))
    assert result.code == 0, result.err
    assert [line for line in result.err.splitlines() if line.startswith("warning:")] == [
        f"warning: {path}: 1 value of a type or shape the reader cannot use, read as absent: "
        "llm.model_name (malformed intValue)"
    ]


def test_a_secret_a_long_span_id_is_cut_in_is_named_by_its_whole_mark(
    tmp_path: Path, run_cli: Callable[..., Any]
) -> None:
    """The warning's cut at `NAME_SHOWN` fell inside the mark the key became:
    `[REDACTED:openai-k…`."""
    secret = "sk-ant-api03-" + "A7" * 45
    shared_id = "i" * 66 + " " + secret + " " + "i" * 1000
    doc = json.loads(CAPTURE.read_text())
    spans = list(_spans(doc))
    spans[1]["spanId"] = spans[2]["spanId"] = shared_id
    spans[3]["parentSpanId"] = shared_id
    path = tmp_path / "capture.otlp.json"
    path.write_text(json.dumps(doc))
    result = run_cli("inspect", str(path))
    named = [line for line in result.err.splitlines() if "iiii" in line]
    assert named and all("[REDACTED:openai-key]…" in line for line in named), named
