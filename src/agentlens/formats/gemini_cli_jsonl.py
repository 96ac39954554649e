"""Gemini CLI session log, JSONL form (2026): `~/.gemini/tmp/<project>/chats/session-*.jsonl`.

An append-only log that the CLI folds back into one conversation, and so does this reader
(following `loadConversationRecord` in gemini-cli's `chatRecordingService.ts`):
* the first line is the session header `{sessionId, projectHash, startTime, lastUpdated, kind}`;
* a line with an `id` is a message: the CLI rewrites a message in full each time its tool calls,
  results or tokens change, so a later line with the same id replaces the earlier one in place
  (reading lines as they come would count each call and its tokens two or three times);
* `{"$set": {...}}` patches the header; a `$set.messages` list replaces the conversation so far
  (the CLI writes it when it rewrites history, e.g. after masking tool output);
* `{"$rewindTo": id}` drops that message and every later one (all of them if the id is unknown).
Messages then read exactly like the older single-JSON session (`gemini_cli.py`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import orjson

from agentlens.errors import SchemaError
from agentlens.formats._json import ReadGuard, head_text, iter_jsonl, json_type, obj, text
from agentlens.formats._reader_base import SuffixReader
from agentlens.formats.gemini_cli import message_steps
from agentlens.trajectory import Agent, Source, Step, Trajectory

HEADER_KEYS = ("sessionId", "projectHash")


class GeminiCliJsonlReader(SuffixReader):
    name: ClassVar[str] = "gemini-cli-jsonl"
    reads_lines: ClassVar[bool] = True
    """Only walks the lines of `data` (`_json.iter_jsonl`): a large file comes as a `LargeFile`."""
    suffixes: ClassVar[tuple[str, ...]] = (".jsonl",)

    @classmethod
    def handles_bytes(cls, head: bytes) -> bool:
        first = head_text(head).split("\n", 1)[0]
        if not first.startswith("{"):
            return False
        try:
            line = orjson.loads(first)
        except orjson.JSONDecodeError:
            return False
        return isinstance(line, dict) and all(isinstance(line.get(k), str) for k in HEADER_KEYS)

    def read(self, path: Path, data: bytes) -> Iterator[Trajectory]:
        log = _Log()
        with ReadGuard(path, self.name, loose=True):
            for number, line in iter_jsonl(path, data, self.name):
                if not isinstance(line, dict):
                    log.warnings.append(f"line {number}: skipped (a JSON {json_type(line)})")
                    continue
                log.take(line, f"line {number}")
            steps: list[Step] = []
            for turn, message in enumerate(log.messages.values()):
                steps.extend(message_steps(message, turn, start=len(steps)))
            if not log.header:
                raise SchemaError(path, "no session header (sessionId, projectHash)", self.name)
            trajectory = _trajectory(path, log, steps)
        yield trajectory


class _Log:
    """The folded state of the log: header fields and messages by id, in first-seen order."""

    def __init__(self) -> None:
        self.header: dict[str, Any] = {}
        self.messages: dict[str, dict[str, Any]] = {}
        self.warnings: list[str] = []
        self.rewinds = 0
        self.rewrites = 0

    def take(self, line: dict[str, Any], where: str) -> None:
        if "$rewindTo" in line:
            self._rewind(text(line["$rewindTo"], f"{where}: $rewindTo"), where)
        elif isinstance(line.get("id"), str):
            self.messages[line["id"]] = line
        elif "$set" in line:
            patch = obj(line["$set"], f"{where}: $set")
            self._replace(patch.get("messages"), where)
            self.header.update((k, v) for k, v in patch.items() if k != "messages")
        elif all(k in line for k in HEADER_KEYS):
            self.header.update(line)
        else:
            self.warnings.append(f"{where}: skipped (not a message, patch or rewind)")

    def _rewind(self, to: str | None, where: str) -> None:
        """Drops from the end (messages keep first-seen order), so a rewind costs what it drops,
        not the whole conversation: a log of rewinds is read in linear time."""
        self.rewinds += 1
        if to not in self.messages:
            if self.messages:  # the CLI rewinds only to a message it holds
                dropped = f"dropped all {len(self.messages)} messages"
                self.warnings.append(f"{where}: $rewindTo an unknown message {to!r} {dropped}")
            self.messages.clear()
            return
        while self.messages.popitem()[0] != to:
            pass

    def _replace(self, messages: Any, where: str) -> None:
        if not isinstance(messages, list) or not messages:
            return
        self.rewrites += 1
        self.messages = {}
        for i, message in enumerate(messages):
            message = obj(message, f"{where}: $set.messages[{i}]")
            key = text(message.get("id"), f"{where}: $set.messages[{i}].id") or f"#{where}:{i}"
            self.messages[key] = message


def _trajectory(path: Path, log: _Log, steps: list[Step]) -> Trajectory:
    models = [s.model for s in steps if s.model]
    kept = ("projectHash", "startTime", "lastUpdated", "kind", "summary", "directories")
    metadata = {k: log.header[k] for k in kept if log.header.get(k) is not None}
    if log.rewinds or log.rewrites:
        metadata["folded"] = {"rewinds": log.rewinds, "history_rewrites": log.rewrites}
    if log.warnings:
        metadata["warnings"] = log.warnings
    return Trajectory(
        id=str(log.header.get("sessionId") or path.stem),
        task=next((s.text for s in steps if s.kind == "user"), None),
        agent=Agent(name="gemini-cli"),
        model=models[0] if models else None,
        source=Source(format=GeminiCliJsonlReader.name, path=str(path)),
        steps=steps,
        metadata=metadata,
    )
