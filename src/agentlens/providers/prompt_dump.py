"""What a command would send to a model, written down instead of sent (`--dump-prompts DIR` on
`review`, `stepvalue` and `run`): one JSON file per call, with the prompt's hash."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from agentlens.file_names import FileStems


@dataclass
class PlannedCall:
    trajectory_id: str
    dimension: str
    messages: list[dict[str, str]]
    schema: dict[str, Any] | None
    max_tokens: int

    @property
    def sha256(self) -> str:
        return prompt_hash(self.messages)


def prompt_hash(messages: list[dict[str, str]]) -> str:
    """SHA-256 of the exact messages sent (stored with each review, and the dump's file name)."""
    body = orjson.dumps(messages, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(body).hexdigest()


def dump_prompts(calls: Sequence[PlannedCall], directory: str | Path) -> list[Path]:
    """One JSON file per call, `<trajectory>/<dimension>.json`: the messages exactly as sent,
    the answer schema (if any), `max_tokens` and the prompt hash stored with the review."""
    written = []
    stems = FileStems("trajectory")
    folders: dict[str, str] = {}  # trajectory id -> its folder, one each
    for call in calls:
        if call.trajectory_id not in folders:
            folders[call.trajectory_id] = stems.add(call.trajectory_id)
        path = Path(directory) / folders[call.trajectory_id] / f"{call.dimension}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        doc = {
            "trajectory_id": call.trajectory_id,
            "dimension": call.dimension,
            "prompt_sha256": call.sha256,
            "max_tokens": call.max_tokens,
            "json_schema": call.schema,
            "messages": call.messages,
        }
        path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
        written.append(path)
    return written
