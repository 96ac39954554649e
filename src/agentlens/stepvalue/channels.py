"""Evaluation channels (spec §8): how the evidence and the rationale buffer reach the scorer.

| channel | evidence | buffer |
|---|---|---|
| direct | rendered state | none (direct prompt) |
| generated-rationale-128 / -512 | rendered state | label-free rationale, 128 / 512 tokens |
| swapped-rationale-128 | rendered state | a 128-token rationale of another state (seed 7) |
| extractive-buffer | up to 24 evidence lines of the state | none |
| candidate-only-rationale | "no evidence" notice | rationale written without evidence |
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from agentlens.errors import ConfigError
from agentlens.stepvalue.projection import EVIDENCE_KEY_PARTS, cut
from agentlens.stepvalue.redaction import StringPolicy, redact

Evidence = Literal["state", "extract", "none"]
MAX_EXTRACT_LINES = 24
DEFAULT_RATIONALE_TOKENS = 128
EXTRACT_LINE_CHARS = 500


@dataclass(frozen=True)
class Channel:
    name: str
    evidence: Evidence = "state"
    rationale_tokens: int | None = None
    swapped: bool = False

    @property
    def direct(self) -> bool:
        return self.rationale_tokens is None and self.evidence != "extract"

    @property
    def generates_rationale(self) -> bool:
        return self.rationale_tokens is not None


CHANNELS: dict[str, Channel] = {
    c.name: c
    for c in (
        Channel("direct"),
        Channel("generated-rationale-128", rationale_tokens=128),
        Channel("generated-rationale-512", rationale_tokens=512),
        Channel("swapped-rationale-128", rationale_tokens=128, swapped=True),
        Channel("extractive-buffer", evidence="extract"),
        Channel("candidate-only-rationale", evidence="none", rationale_tokens=128),
    )
}
DEFAULT_CHANNELS = ("direct", "generated-rationale-128", "extractive-buffer")


def get_channel(name: str, rationale_tokens: int | None = None) -> Channel:
    """A channel by name; `rationale_tokens` overrides the 128-token rationale length of every
    channel that writes one (the 512-token ablation keeps its length), and the name that says
    128 then says the new length."""
    channel = CHANNELS.get(name)
    if channel is None:
        raise ConfigError(f"unknown channel '{name}'; known channels: {', '.join(CHANNELS)}")
    if rationale_tokens is None or channel.rationale_tokens != DEFAULT_RATIONALE_TOKENS:
        return channel
    renamed = name.replace(str(DEFAULT_RATIONALE_TOKENS), str(rationale_tokens))
    return Channel(renamed, channel.evidence, rationale_tokens, channel.swapped)


def extractive_buffer(state: dict[str, Any], policy: StringPolicy = "whole") -> str:
    """Up to 24 `key: value` lines of the state whose key path names evidence."""
    lines = [
        cut(f"{path}: {' '.join(text.split())}", EXTRACT_LINE_CHARS)
        for path, text in _flatten(redact(state, policy), "")
        if any(part in path.lower() for part in EVIDENCE_KEY_PARTS)
    ]
    return "\n".join(lines[:MAX_EXTRACT_LINES]) or "(no evidence lines in this state)"


def _flatten(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for key in sorted(value):
            yield from _flatten(value[key], f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _flatten(item, f"{path}[{i}]")
    elif value is not None:
        yield path, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
