"""OpenHands V1 software-agent-sdk event JSONL: one event per line, discriminated by `kind`.
The conversion lives in `_openhands_sdk`. A persisted `base_state.json` beside the events holds no
events: it is read as a sidecar (conversation id, model when no `stats` event names one)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from agentlens.errors import SchemaError
from agentlens.formats import _openhands_common as oh
from agentlens.formats._json import ReadGuard, iter_jsonl
from agentlens.formats._openhands_sdk import V1Converter
from agentlens.formats._reader_base import SuffixReader
from agentlens.formats.limits import read_bounded
from agentlens.trajectory import Agent, Source, Trajectory

HEAD = re.compile(
    rb'"kind"\s*:\s*"(ActionEvent|ObservationEvent|MessageEvent|SystemPromptEvent|'
    rb'ConversationStateUpdateEvent|AgentErrorEvent|PauseEvent|Condensation\w*)"'
)


class OpenHandsV1Reader(SuffixReader):
    name: ClassVar[str] = "openhands-v1"
    suffixes: ClassVar[tuple[str, ...]] = (".jsonl",)

    @classmethod
    def handles_bytes(cls, head: bytes) -> bool:
        first = head.lstrip().split(b"\n", 1)[0]
        return first.startswith(b"{") and bool(HEAD.search(first))

    def read(self, path: Path, data: bytes) -> Iterator[Trajectory]:
        events = []
        for number, event in iter_jsonl(path, data, self.name):
            if not isinstance(event, dict) or "kind" not in event:
                raise SchemaError(path, f"line {number} is not an SDK event (no 'kind')", self.name)
            events.append(event)
        with ReadGuard(path, self.name):
            trajectory = self._trajectory(path, events)
        yield trajectory

    def _trajectory(self, path: Path, events: list[dict[str, Any]]) -> Trajectory:
        converter = V1Converter(path, self.name)
        steps = converter.convert(events)
        usage, cost = converter.reported()
        state = _base_state(path)
        llm = oh.as_dict(oh.as_dict(state.get("agent")).get("llm"))
        return Trajectory(
            id=str(state.get("id") or path.stem),
            task=next((s.text for s in steps if s.kind == "user"), None),
            agent=Agent(name="OpenHands"),
            model=converter.model or (str(llm["model"]) if llm.get("model") else None),
            source=Source(format=self.name, path=str(path), format_version="sdk-events"),
            steps=steps,
            reported_usage=usage,
            reported_cost=cost,
            metadata={k: state[k] for k in ("max_iterations", "execution_status") if k in state},
        )


def _base_state(path: Path) -> dict[str, Any]:
    """The persisted conversation state beside the events, when there is one (a sidecar)."""
    try:
        return oh.as_dict(oh.parse_arguments(read_bounded(path.parent / "base_state.json")))
    except OSError:
        return {}
