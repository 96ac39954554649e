"""Which agent each span of an OTel trace belongs to: the run's own, or one of its sub-agents'.

A sub-agent is an agent span that a call started (a tool span is its nearest ancestor of a known
kind, as a `Task` call starts a Claude Code sub-agent) or one `convert --to otel` marked
(`agentlens.subagent`). An agent span nested any other way (a framework's chain inside its own
agent span) is the same agent, and spans under no sub-agent are the run's. Parent ids come from
the file: a loop of them ends a walk, and sub-agents nested deeper than `MAX_DEPTH` are read as
part of the sub-agent above them. A parent id names one span: an id that several spans share
names none of them (the spans under it are the run's, `Agents.ambiguous` says which ids), and a
span with an empty id is placed by its own parent but is no span's parent.
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
    ambiguous: list[str] = field(default_factory=list)  # parent ids more than one span has


def partition(spans: list[Span]) -> Agents:
    shared = _shared(spans)
    # a parent id names one span: an id two spans have names neither, and "" is no id
    by_id = {s.span_id: s for s in spans if s.span_id and s.span_id not in shared}
    agents = Agents(ambiguous=sorted({s.parent for s in spans if s.parent in shared}))
    known = _Nearest(by_id, lambda s: s.kind != "other")  # past spans of none (HTTP, DB)
    roots = [s for s in by_id.values() if s.kind == "agent" and _starts(s, known, agents)]
    root_ids = {root.span_id for root in roots}
    depth = _depths(_Nearest(by_id, lambda s: s.span_id in root_ids), roots)
    kept = {root for root, level in depth.items() if level <= MAX_DEPTH}
    above = _Nearest(by_id, lambda s: s.span_id in kept)
    for span in spans:
        own = span.span_id if span.span_id in kept and by_id[span.span_id] is span else None
        agents.spans.setdefault(own or above.id_of(span), []).append(span)
        if own is not None:
            agents.subagents.setdefault(above.id_of(span), []).append(span)
    agents.caller = {root: call for root, call in agents.caller.items() if root in kept}
    return agents


def _shared(spans: list[Span]) -> set[str]:
    """The span ids more than one span has."""
    seen: set[str] = set()
    shared = set()
    for span in spans:
        if span.span_id in seen:
            shared.add(span.span_id)
        seen.add(span.span_id)
    return shared - {""}


def _starts(span: Span, known: _Nearest, agents: Agents) -> bool:
    """Whether `span` is a sub-agent's root; notes the call that started it in `agents.caller`."""
    parent = known.of(span)
    if parent is not None and parent.kind == "tool":
        agents.caller[span.span_id] = parent.span_id
        return True
    return span.parent is not None and span.attrs.get("agentlens.subagent") is True


def _depths(above: _Nearest, roots: list[Span]) -> dict[str, int]:
    """How many sub-agent roots are at or above each root (`above` stops at roots)."""
    found: dict[str, int] = {}
    for root in roots:
        chain, on_chain = [root], {root.span_id}
        while (up := above.of(chain[-1])) is not None and up.span_id not in found:
            if up.span_id in on_chain:
                break
            chain.append(up)
            on_chain.add(up.span_id)
        # roots above each other in a loop are too deep: read as the run's own spans
        base = 0 if up is None else MAX_DEPTH if up.span_id in on_chain else found[up.span_id]
        for level, each in enumerate(reversed(chain), start=base + 1):
            found[each.span_id] = level
    return found


class _Nearest:
    """The nearest span strictly above each span for which `stop` holds (None: none, or a loop
    of parent ids on the way), memoised for every span walked past: each is walked once, however
    many spans hang under it. A root above itself through a loop is its own nearest (too deep,
    in `_depths`). Only spans of `by_id` are parents: a span whose id is shared or empty is
    walked up from, never through."""

    def __init__(self, by_id: dict[str, Span], stop: Callable[[Span], bool]) -> None:
        self.by_id, self.stop = by_id, stop
        self.known: dict[str, Span | None] = {}

    def of(self, span: Span) -> Span | None:
        path = [span.span_id] if self.by_id.get(span.span_id) is span else []
        seen = set(path)
        at = self._parent(span)
        while at is not None and not self.stop(at) and at.span_id not in self.known:
            if at.span_id in seen:  # a loop of parent ids: nothing above is known
                at = None
                break
            path.append(at.span_id)
            seen.add(at.span_id)
            at = self._parent(at)
        found = at if at is None or self.stop(at) else self.known[at.span_id]
        for each in path:
            self.known[each] = found
        return found

    def id_of(self, span: Span) -> str | None:
        found = self.of(span)
        return found.span_id if found is not None else None

    def _parent(self, span: Span) -> Span | None:
        return self.by_id.get(span.parent) if span.parent else None
