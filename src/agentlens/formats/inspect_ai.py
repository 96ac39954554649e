"""Inspect AI eval logs: `.json` (log version 2) and `.eval` zips; one trajectory per sample.

Steps come from `sample.messages` after `attachment://<hash>` references are replaced by the
sample's `attachments`. Each assistant message is one turn: its tool calls become `tool` steps
(its text goes on the first), and `role: tool` messages fill in observations and `is_error`.
Per-step usage and timestamps come from the sample's `model` events, paired with the assistant
messages in order when their counts agree. Zip members are looked up by name (their order is
not fixed); a log still being written has only `_journal/start.json` and no samples.
"""

from __future__ import annotations

import io
import lzma
import re
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import orjson

from agentlens.errors import SchemaError, TraceError
from agentlens.formats._json import (
    ReadGuard,
    ShapeError,
    head_text,
    json_type,
    loads,
    preview,
)
from agentlens.formats._reader_base import SuffixReader
from agentlens.formats._steps import classify, parse_time, token_usage
from agentlens.formats._typed_json import listed, scalar_text
from agentlens.formats.limits import ENV, human, max_file_size
from agentlens.trajectory import Agent, Outcome, Source, Step, StepKind, Trajectory, Usage

ZIP_MAGIC = b"PK\x03\x04"
END_OF_ARCHIVE = b"PK\x05\x06"
END_SEARCH = 22 + 0xFFFF  # the record, then a comment of up to 64 KiB
JSON_LOG = re.compile(r'^\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:')
ATTACHMENT = re.compile(r"^(?:attachment|tc)://([0-9a-f]{32})$")
# the sample fields a trajectory shows; `events`, `store`, `output` and the attachments themselves
# are left as they are (walking them costs as much as the rest of the reader)
RESOLVED = {"id", "uuid", "epoch", "input", "messages", "scores", "metadata", "target", "error"}
# a member declaring more than this is refused before it is inflated (a zip bomb-like member)
MAX_MEMBER_BYTES = 1 << 30
PASS, FAIL = {"C", "correct", "pass", "passed"}, {"I", "incorrect", "fail", "failed"}


class InspectAiReader(SuffixReader):
    name: ClassVar[str] = "inspect-ai"
    suffixes: ClassVar[tuple[str, ...]] = (".eval", ".json")

    @classmethod
    def handles_bytes(cls, head: bytes) -> bool:
        return head.startswith(ZIP_MAGIC) or bool(JSON_LOG.match(head_text(head[:512])))

    def read(self, path: Path, data: bytes) -> Iterator[Trajectory]:
        with ReadGuard(path, self.name):
            header, samples = (
                _read_eval(path, data) if data.startswith(ZIP_MAGIC) else _read_json(path, data)
            )
        for sample in samples:
            with ReadGuard(path, self.name):
                try:
                    trajectory = _trajectory(path, header, sample)
                except ShapeError as exc:
                    raise ShapeError(f"sample {preview(sample.get('id'))}: {exc}") from None
            yield trajectory


def _read_json(path: Path, data: bytes) -> tuple[dict[str, Any], list[Any]]:
    doc = loads(path, data, InspectAiReader.name)
    if not isinstance(doc, dict) or not isinstance(doc.get("eval"), dict):
        raise SchemaError(path, "no 'eval' object: not an Inspect log", InspectAiReader.name)
    samples = doc.get("samples")
    return doc, [s for s in samples if isinstance(s, dict)] if isinstance(samples, list) else []


def _read_eval(path: Path, data: bytes) -> tuple[dict[str, Any], list[Any]]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    # NotImplementedError: a flipped "version needed" byte; ValueError/EOFError: bad offsets
    except (zipfile.BadZipFile, NotImplementedError, ValueError, EOFError, OSError) as exc:
        raise TraceError(
            path, f"broken .eval zip: {exc}{_cut_hint(data)}", InspectAiReader.name
        ) from exc
    with archive:
        names = set(archive.namelist())
        header_name = "header.json" if "header.json" in names else "_journal/start.json"
        if header_name not in names:
            raise SchemaError(path, "no header.json in the .eval zip", InspectAiReader.name)
        members = sorted((n for n in names if n.startswith("samples/")), key=_sample_order)
        _check_inflated(path, archive, [header_name, *members])
        header = _member(path, archive, header_name)
        if not isinstance(header, dict):
            message = f"{header_name} should be an object, found {json_type(header)}"
            raise SchemaError(path, message, InspectAiReader.name)
        samples = [_member(path, archive, n) for n in members]
        return header, [s for s in samples if isinstance(s, dict)]  # as `.json` logs are read


def _cut_hint(data: bytes) -> str:
    """A zip's directory is written last, at its end: a file without one was cut short."""
    if END_OF_ARCHIVE in data[-END_SEARCH:]:
        return ""
    return " (no end-of-archive record: still being written, or truncated?)"


def _check_inflated(path: Path, archive: zipfile.ZipFile, names: list[str]) -> None:
    """The members read count toward the input cap, as the file's own bytes would: a small
    `.eval` may declare gigabytes of samples, and every sample is held at once."""
    limit = max_file_size()
    inflated = sum(archive.getinfo(name).file_size for name in names)
    if limit is not None and inflated > limit:
        reason = (
            f"its members inflate to {human(inflated)}, over the {human(limit)} input cap "
            f"(raise it with --max-file-size or {ENV})"
        )
        raise TraceError(path, reason, InspectAiReader.name)


def _member(path: Path, archive: zipfile.ZipFile, name: str) -> Any:
    # The declared size bounds the memory used only through `read(size)`: `archive.read(name)`
    # inflates up to 2 GiB in one step before cutting to the size, so a member that declares 100
    # bytes and inflates to gigabytes took 2 GiB from a 1.5 MB file (the CRC fails after).
    size = archive.getinfo(name).file_size
    if size > MAX_MEMBER_BYTES:
        message = f"member {name} declares {size} bytes, over the {MAX_MEMBER_BYTES} cap"
        raise TraceError(path, message, InspectAiReader.name)
    try:
        with archive.open(name) as member:
            return orjson.loads(member.read(size))
    # RuntimeError: a flipped flag bit marks the member encrypted
    except (
        zipfile.BadZipFile,
        zlib.error,
        lzma.LZMAError,
        EOFError,
        NotImplementedError,
        ValueError,
        RuntimeError,
        OSError,
    ) as exc:
        raise TraceError(path, f"broken member {name}: {exc}", InspectAiReader.name) from exc


def _sample_order(name: str) -> tuple[int, str]:
    stem = name.removeprefix("samples/").removesuffix(".json")
    sample, _, epoch = stem.rpartition("_epoch_")
    return (int(epoch) if epoch.isdigit() else 0, sample.zfill(12))


def _trajectory(path: Path, header: dict[str, Any], sample: dict[str, Any]) -> Trajectory:
    spec = header.get("eval") or {}
    if not isinstance(spec, dict):
        raise ShapeError(f"header eval should be an object, found {json_type(spec)}")
    packages = spec.get("packages")
    attachments = sample.get("attachments") or {}
    if not isinstance(attachments, dict):
        raise ShapeError(f"attachments should be an object, found {json_type(attachments)}")
    if attachments:
        sample = {k: _resolve_field(k, v, attachments) for k, v in sample.items()}
    steps, model_events = _steps(sample)
    version = packages.get("inspect_ai") if isinstance(packages, dict) else None
    if type(version) is not str and version is not None:
        version = scalar_text(version, "eval.packages.inspect_ai")
    model = spec.get("model")
    if type(model) is not str and model is not None:
        model = scalar_text(model, "eval.model")
    return Trajectory(
        id=str(
            sample.get("uuid") or f"{spec.get('run_id')}:{sample.get('id')}:{sample.get('epoch')}"
        ),
        task_id=f"{spec.get('task')}/{sample.get('id')}",
        task=_text(sample.get("input")),
        agent=Agent(name=_solver(header), version=version),
        model=model,
        outcome=_outcome(sample.get("scores")),
        source=Source(
            format=InspectAiReader.name,
            path=str(path),
            format_version=str(header.get("version")),
            index=_int(sample.get("id")),
        ),
        steps=steps,
        reported_usage=_total_usage(sample.get("model_usage")),
        metadata=_metadata(header, sample, model_events, steps),
    )


def _steps(sample: dict[str, Any]) -> tuple[list[Step], int]:
    steps: list[Step] = []
    calls: dict[str, Step] = {}
    turns: list[Step] = []
    for position, message in enumerate(listed(sample.get("messages"), "messages")):
        if not isinstance(message, dict):
            raise ShapeError(
                f"messages[{position}] should be an object, found {json_type(message)}"
            )
        role = message.get("role")
        if role == "assistant":
            new = _assistant(message, len(turns))
            turns.append(new[0])
            calls.update({s.call_id: s for s in new if s.call_id})
        elif role == "tool":
            new = _tool_result(message, calls)
        else:
            kind: StepKind = "system" if role == "system" else "user"
            new = [Step(index=0, kind=kind, text=_text(message.get("content")), raw=message)]
        for step in new:
            step.index = len(steps)
            steps.append(step)
    models = _agent_model_events(sample.get("events") or [])
    if len(models) == len(turns):
        for first, event in zip(turns, models, strict=True):
            output = event.get("output")
            first.usage = _usage(output.get("usage") if isinstance(output, dict) else None)
            first.timestamp = parse_time(event.get("timestamp"))
    return steps, len(models)


def _agent_model_events(events: list[Any]) -> list[dict[str, Any]]:
    """Model calls of the agent, leaving out those a scorer made (e.g. `model_graded_fact`)."""
    if not isinstance(events, list):
        return []
    events = [e for e in events if isinstance(e, dict)]
    scoring = {
        _key(e.get("id"))
        for e in events
        if e.get("event") == "span_begin" and e.get("type") == "scorer"
    }
    return [
        e for e in events if e.get("event") == "model" and _key(e.get("span_id")) not in scoring
    ]


def _key(value: Any) -> Any:
    """A span id as a set member: an array or object (which do not hash) by its JSON text."""
    return orjson.dumps(value) if isinstance(value, list | dict) else value


def _assistant(message: dict[str, Any], turn: int) -> list[Step]:
    text = _text(message.get("content"))
    model = message.get("model")
    if type(model) is not str and model is not None:
        model = scalar_text(model, "assistant message model")
    calls = [c for c in message.get("tool_calls") or [] if isinstance(c, dict)]
    if not calls:
        return [Step(index=0, kind="agent", text=text, turn=turn, model=model, raw=message)]
    steps = []
    for call in calls:
        name = str(call.get("function") or "unknown")
        args: dict[str, Any] = call["arguments"] if isinstance(call.get("arguments"), dict) else {}
        view = classify(name, args)
        steps.append(
            Step(
                index=0,
                kind="tool",
                turn=turn,
                tool_name=name,
                category=view.category,
                call_id=_call_id(call.get("id")),
                arguments=args,
                command=view.command,
                files=view.files,
                model=model,
                raw=call,
            )
        )
    steps[0].text = text
    return steps


def _call_id(value: Any, where: str = "tool call id") -> str | None:
    return value if type(value) is str else scalar_text(value, where)


def _tool_result(message: dict[str, Any], calls: dict[str, Step]) -> list[Step]:
    step = calls.get(str(message.get("tool_call_id")))
    orphan = step is None
    if step is None:  # a result whose call is not in the log (seen in hand-made logs)
        name = str(message.get("function") or "unknown")
        category = classify(name, {}).category
        step = Step(index=0, kind="tool", tool_name=name, category=category, raw=message)
        step.call_id = _call_id(message.get("tool_call_id"), "tool message tool_call_id")
    step.observation = _text(message.get("content"))
    step.is_error = message.get("error") is not None
    return [step] if orphan else []


def _outcome(scores: Any) -> Outcome:
    """Pass/fail only when every scorer gives a clear verdict and they agree."""
    if not isinstance(scores, dict) or not scores:
        return Outcome()
    verdicts = {name: _verdict(_score_value(score)) for name, score in scores.items()}
    found = set(verdicts.values())
    if len(found) != 1 or None in found:
        return Outcome(detail=f"unclear scores: {verdicts}")
    names = ", ".join(f"{n}={_score_value(scores[n])!r}" for n in scores)
    return Outcome(status=found.pop(), source="inspect-score", detail=names)  # type: ignore[arg-type]


def _score_value(score: Any) -> Any:
    return score.get("value") if isinstance(score, dict) else None


def _verdict(value: Any) -> str | None:
    if isinstance(value, bool):
        return "passed" if value else "failed"
    if isinstance(value, str):
        return "passed" if value in PASS else "failed" if value in FAIL else None
    if isinstance(value, int | float):
        return "passed" if value == 1 else "failed" if value == 0 else None
    return None


def _resolve_field(key: str, value: Any, attachments: dict[str, str]) -> Any:
    """`_resolve` for a shown field, walking only messages that hold a reference: looking for
    one in the message's JSON is a C scan, walking it is Python for every value."""
    if key not in RESOLVED:
        return value
    if key == "messages" and isinstance(value, list):
        return [_resolve(m, attachments) if _referenced(m) else m for m in value]
    return _resolve(value, attachments) if _referenced(value) else value


def _referenced(value: Any) -> bool:
    try:
        blob = orjson.dumps(value)
    except orjson.JSONEncodeError:  # e.g. an integer beyond 64 bits: walk it instead
        return True
    return b"attachment://" in blob or b"tc://" in blob


def _resolve(value: Any, attachments: dict[str, str]) -> Any:
    if isinstance(value, str):
        match = ATTACHMENT.match(value) if value.startswith(("attachment://", "tc://")) else None
        return attachments.get(match[1], value) if match else value
    if isinstance(value, list):
        return [_resolve(v, attachments) for v in value]
    if isinstance(value, dict):
        return {k: v if k == "events" else _resolve(v, attachments) for k, v in value.items()}
    return value


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_part_text(p) for p in content)
    return "" if content is None else orjson.dumps(content).decode()


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return str(part)
    if "role" in part:  # `input` may be a list of chat messages
        return _text(part.get("content"))
    return str(part.get("text") or part.get("reasoning") or f"[{part.get('type')}]")


def _usage(raw: Any) -> Usage | None:
    return token_usage(raw, "input_tokens_cache_read", "usage.")


def _total_usage(model_usage: Any) -> Usage | None:
    usages = [_usage(u) for u in model_usage.values()] if isinstance(model_usage, dict) else []
    present = [u for u in usages if u is not None]
    return sum(present[1:], present[0]) if present else None


def _solver(header: dict[str, Any]) -> str:
    plan = header.get("plan")
    steps = plan.get("steps") if isinstance(plan, dict) else None
    steps = steps if isinstance(steps, list) else []
    names = [str(s.get("solver")) for s in steps if isinstance(s, dict) and s.get("solver")]
    return "inspect_ai:" + "+".join(names) if names else "inspect_ai"


def _metadata(
    header: dict[str, Any], sample: dict[str, Any], model_events: int, steps: list[Step]
) -> dict[str, Any]:
    meta = {
        k: sample[k] for k in ("epoch", "target", "scores", "metadata", "error") if sample.get(k)
    }
    meta["eval_status"] = header.get("status")
    turns = len({s.turn for s in steps if s.turn is not None})
    if model_events != turns:
        meta["usage_note"] = (
            f"{model_events} model events vs {turns} assistant turns: no per-step usage"
        )
    return meta


def _int(value: Any) -> int | None:
    if type(value) is int:
        return value
    return int(value) if type(value) is str and value.isdecimal() else None
