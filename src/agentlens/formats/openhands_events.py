"""OpenHands legacy (V0) event lists: a JSON list of action and observation events
(`tests/runtime/trajs/*.json`, replay trajectories). The conversion lives in `_openhands_legacy`."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

from agentlens.formats._json import loads, require
from agentlens.formats._openhands_legacy import LegacyConverter
from agentlens.formats._reader_base import SuffixReader
from agentlens.trajectory import Agent, Source, Trajectory

HEAD = re.compile(rb'^\s*\[\s*\{[^{}]*"(source|action|observation)"\s*:')


class OpenHandsEventsReader(SuffixReader):
    name: ClassVar[str] = "openhands-events"
    suffixes: ClassVar[tuple[str, ...]] = (".json",)

    @classmethod
    def handles_bytes(cls, head: bytes) -> bool:
        return bool(HEAD.match(head[:2048])) and (b'"action"' in head or b'"observation"' in head)

    def read(self, path: Path, data: bytes) -> Iterator[Trajectory]:
        events = require(path, self.name, loads(path, data, self.name), list, "top level")
        converter = LegacyConverter(path, self.name)
        stem = path.stem
        steps, subs = converter.convert(events, stem)
        yield Trajectory(
            id=stem,
            task=next((s.text for s in steps if s.kind == "user"), None),
            agent=Agent(name="OpenHands"),
            model=converter.model,
            source=Source(format=self.name, path=str(path), format_version="v0-events"),
            steps=steps,
            reported_usage=converter.reported_usage,
            reported_cost=converter.reported_cost,
            subtrajectories=subs,
        )
