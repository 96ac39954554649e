"""Which agent each span of an OTel trace belongs to: the run's own, or one of its sub-agents'.

A sub-agent is an agent span that a call started (a tool span is its nearest ancestor of a known
kind, as a `Task` call starts a Claude Code sub-agent) or one `convert --to otel` marked
(`agentlens.subagent`). An agent span nested any other way (a framework's chain inside its own
agent span) is the same agent, and spans under no sub-agent are the run's. Parent ids come from
the file: a loop of them ends a walk, and sub-agents nested deeper than `MAX_DEPTH` are read as
part of the sub-agent above them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from agentlens.formats._otel_spans import Span

MAX_DEPTH = 16


@dataclass
class Agents:
    """Spans by agent: `None` is the run, any other key a sub-agent's root span id."""

    spans: dict[str | None, list[Span]] = field(default_factory=dict)
    subagents: dict[str | None, list[Span]] = field(default_factory=dict)
    caller: dict[str, str] = field(default_factory=dict)  # sub-agent root -> the call's span


def partition(spans: list[Span]) -> Agents:
    by_id: dict[str, Span] = {}
    for span in spans:
        by_id.setdefault(span.span_id, span)
    agents = Agents()
    known = _Nearest(by_id, lambda s: s.kind != "other")  # past spans of none (HTTP, DB)
    roots = {
        s.span_id
        for s in by_id.values()
        if s.span_id and s.kind == "agent" and _starts(s, known, agents)
    }
    depth = _depths(_Nearest(by_id, lambda s: s.span_id in roots), roots)
    kept = {root for root in roots if depth[root] <= MAX_DEPTH}
    above = _Nearest(by_id, lambda s: s.span_id in kept)
    for span in spans:
        own = span.span_id if span.span_id in kept else above.id_of(span.span_id)
        agents.spans.setdefault(own, []).append(span)
        if own == span.span_id and by_id.get(own) is span:
            agents.subagents.setdefault(above.id_of(own), []).append(span)
    agents.caller = {root: call for root, call in agents.caller.items() if root in kept}
    return agents


def _starts(span: Span, known: _Nearest, agents: Agents) -> bool:
    """Whether `span` is a sub-agent's root; notes the call that started it in `agents.caller`."""
    parent = known.of(span.span_id)
    if parent is not None and parent.kind == "tool":
        agents.caller[span.span_id] = parent.span_id
        return True
    return span.parent is not None and span.attrs.get("agentlens.subagent") is True


def _depths(above: _Nearest, roots: set[str]) -> dict[str, int]:
    """How many sub-agent roots are at or above each root (`above` stops at roots)."""
    found: dict[str, int] = {}
    for root in roots:
        chain, on_chain = [root], {root}
        while (up := above.id_of(chain[-1])) is not None and up not in found and up not in on_chain:
            chain.append(up)
            on_chain.add(up)
        # roots above each other in a loop are too deep: read as the run's own spans
        base = MAX_DEPTH if up in on_chain else found.get(up, 0) if up is not None else 0
        for level, each in enumerate(reversed(chain), start=base + 1):
            found[each] = level
    return found


class _Nearest:
    """The nearest span strictly above each span for which `stop` holds (None: none, or a loop
    of parent ids on the way), memoised for every span walked past: each is walked once, however
    many spans hang under it. A root above itself through a loop is its own nearest (too deep,
    in `_depths`)."""

    def __init__(self, by_id: dict[str, Span], stop: Callable[[Span], bool]) -> None:
        self.by_id, self.stop = by_id, stop
        self.known: dict[str, Span | None] = {}

    def of(self, span_id: str) -> Span | None:
        path, seen = [span_id], {span_id}
        at = self._parent(span_id)
        while at is not None and not self.stop(at) and at.span_id not in self.known:
            if at.span_id in seen:  # a loop of parent ids: nothing above is known
                at = None
                break
            path.append(at.span_id)
            seen.add(at.span_id)
            at = self._parent(at.span_id)
        found = at if at is None or self.stop(at) else self.known[at.span_id]
        for each in path:
            self.known[each] = found
        return found

    def id_of(self, span_id: str) -> str | None:
        found = self.of(span_id)
        return found.span_id if found is not None else None

    def _parent(self, span_id: str) -> Span | None:
        span = self.by_id.get(span_id)
        return self.by_id.get(span.parent) if span is not None and span.parent else None
