"""Which agent each span of an OTel trace belongs to: the run's own, or one of its sub-agents'.

A sub-agent is an agent span that a call started (a tool span is its nearest ancestor of a known
kind, as a `Task` call starts a Claude Code sub-agent) or one `convert --to otel` marked
(`agentlens.subagent`). An agent span nested any other way (a framework's chain inside its own
agent span) is the same agent, and spans under no sub-agent are the run's. Parent ids come from
the file: a loop of them ends a walk, and sub-agents nested deeper than `MAX_DEPTH` are read as
part of the sub-agent above them.
"""

from __future__ import annotations

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
    known = _Known(by_id)
    roots = {
        s.span_id: s
        for s in by_id.values()
        if s.span_id and s.kind == "agent" and _starts(s, known, agents)
    }
    depth = _Above(by_id, set(roots)).depths(roots)
    above = _Above(by_id, {r for r in roots if depth[r] <= MAX_DEPTH})
    for span in spans:
        own = span.span_id if span.span_id in above.roots else above.of(span.span_id)
        agents.spans.setdefault(own, []).append(span)
        if own == span.span_id and by_id.get(own) is span:
            agents.subagents.setdefault(above.of(own), []).append(span)
    agents.caller = {root: call for root, call in agents.caller.items() if root in above.roots}
    return agents


def _starts(span: Span, known: _Known, agents: Agents) -> bool:
    """Whether `span` is a sub-agent's root; notes the call that started it in `agents.caller`."""
    parent = known.above(span)
    if parent is not None and parent.kind == "tool":
        agents.caller[span.span_id] = parent.span_id
        return True
    return span.parent is not None and span.attrs.get("agentlens.subagent") is True


class _Known:
    """The nearest span of a known kind above each span, past spans of none (HTTP, DB), memoised
    by the spans of none walked past: each is walked once, however many agents hang under it."""

    def __init__(self, by_id: dict[str, Span]) -> None:
        self.by_id = by_id
        self.past: dict[str, Span | None] = {}  # a span of no kind -> the known one above it

    def above(self, span: Span) -> Span | None:
        path, seen = [], set()
        at = self._parent(span)
        while at is not None and at.kind == "other" and at.span_id not in self.past:
            if at.span_id in seen:  # a loop of parent ids: no known kind above
                at = None
                break
            path.append(at.span_id)
            seen.add(at.span_id)
            at = self._parent(at)
        found = self.past[at.span_id] if at is not None and at.kind == "other" else at
        for each in path:
            self.past[each] = found
        return found

    def _parent(self, span: Span) -> Span | None:
        return self.by_id.get(span.parent) if span.parent else None


class _Above:
    """The nearest sub-agent root strictly above each span (None: the run), memoised."""

    def __init__(self, by_id: dict[str, Span], roots: set[str]) -> None:
        self.by_id, self.roots = by_id, roots
        self.known: dict[str, str | None] = {}

    def of(self, span_id: str) -> str | None:
        path, seen = [span_id], {span_id}
        at = self._parent(span_id)
        while at is not None and at not in self.roots and at not in self.known and at not in seen:
            path.append(at)
            seen.add(at)
            at = self._parent(at)
        found = at if at in self.roots else self.known.get(at) if at is not None else None
        if at in seen and at not in self.roots:  # a loop of parent ids: nothing above is known
            found = None  # (a root's own loop leaves it above itself: too deep, in `depths`)
        for each in path:
            self.known[each] = found
        return found

    def depths(self, roots: dict[str, Span]) -> dict[str, int]:
        """How many sub-agent roots are at or above each root."""
        found: dict[str, int] = {}
        for root in roots:
            chain, on_chain = [root], {root}
            while (up := self.of(chain[-1])) is not None and up not in found and up not in on_chain:
                chain.append(up)
                on_chain.add(up)
            # roots above each other in a loop are too deep: read as the run's own spans
            base = MAX_DEPTH if up in on_chain else found.get(up, 0) if up is not None else 0
            for level, each in enumerate(reversed(chain), start=base + 1):
                found[each] = level
        return found

    def _parent(self, span_id: str) -> str | None:
        span = self.by_id.get(span_id)
        return span.parent if span is not None and span.parent else None
