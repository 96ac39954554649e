"""The versioned canonical trajectory model every reader produces and every analysis consumes.

msgspec Structs rather than pydantic models: construction is ~5-10x cheaper, and readers build
tens of thousands of steps per second, which is what keeps ingest within 2x of a bare JSON parse.
Encoding to JSON / decoding with validation is done by `msgspec.json` (see `dump_jsonl`/`load_jsonl`
in `agentlens.formats.jsonl`).

The Structs are `gc=False`: a trajectory is a tree (steps, their JSON `raw`, sub-trajectories),
never a cycle, so the cycle collector need not track it; reading the 399 AgentLens-Bench dev traces
end to end went 0.19 -> 0.13 s (`benchmarks/ingest.py`), since full collections no longer walk
every step already read. Do not make a step refer back to itself or its trajectory.

Field order is deliberate (it is the on-disk order); bump `SCHEMA_VERSION` on any breaking change.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

import msgspec

SCHEMA_VERSION = "agentlens.trajectory/1"

StepKind = Literal["system", "user", "agent", "tool"]
"""`tool` is a tool call together with its result; `agent` is a message without a tool call."""

OutcomeStatus = Literal["passed", "failed", "unknown"]


class ToolCategory(StrEnum):
    """Canonical tool categories, shared by every format, so analyses never match raw tool names."""

    READ_FILE = "read_file"
    LIST_DIR = "list_dir"
    SEARCH = "search"
    EDIT = "edit"
    CREATE_FILE = "create_file"
    RUN_COMMAND = "run_command"
    THINK = "think"
    FINISH = "finish"
    OTHER = "other"


class Usage(msgspec.Struct, kw_only=True, omit_defaults=True, gc=False):
    """Token usage of one step (already de-cumulated) or a total."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class Outcome(msgspec.Struct, kw_only=True, omit_defaults=True, gc=False):
    """Pass/fail with where the label came from (e.g. `file`, `run_instance.log`, `sb-cli-report`)."""

    status: OutcomeStatus = "unknown"
    source: str | None = None
    detail: str | None = None


class Source(msgspec.Struct, kw_only=True, omit_defaults=True, gc=False):
    """Where a trajectory was read from. `index` is the record number inside multi-record files.
    `read_from` is the file a batch read it from when that is not `path`: a canonical JSONL file
    (`agentlens convert --to jsonl`) keeps its original's `path` and `format` as provenance."""

    format: str
    path: str = ""
    format_version: str | None = None
    index: int | None = None
    read_from: str | None = None


class Agent(msgspec.Struct, kw_only=True, omit_defaults=True, gc=False):
    name: str | None = None
    version: str | None = None


class Step(msgspec.Struct, kw_only=True, omit_defaults=True, gc=False):
    """One step. For `tool` steps, the call and its observation live together.

    `turn` groups steps that came from one model response, so parallel tool calls share a turn.
    `stored_stage` keeps an intent label carried by the input (AgentLens-Bench `intent_stage`).
    `subtrajectory` links to `Trajectory.subtrajectories[*].id` when the call spawned a sub-agent.
    `raw` is the source's own record, whole; a record of several calls is on its first call only.
    `cwd` is the directory the call started in, when the source records it (SWE-agent,
    mini-swe-agent, OpenHands, Claude Code, Codex, Copilot CLI, Grok CLI; docs/stepvalue.md): a
    relative name in `files` or `command` is relative to it.
    """

    index: int
    kind: StepKind
    text: str = ""
    turn: int | None = None
    tool_name: str | None = None
    category: ToolCategory | None = None
    call_id: str | None = None
    arguments: dict[str, Any] = msgspec.field(default_factory=dict)
    command: str | None = None
    files: list[str] = msgspec.field(default_factory=list)
    cwd: str | None = None
    observation: str | None = None
    is_error: bool | None = None
    timestamp: datetime | None = None
    usage: Usage | None = None
    cost: float | None = None
    model: str | None = None
    stored_stage: str | None = None
    subtrajectory: str | None = None
    raw: Any = None


class Trajectory(msgspec.Struct, kw_only=True, omit_defaults=True, gc=False):
    """One agent run, in the canonical shape. `reported_usage`/`reported_cost` are the file's own
    totals (kept to cross-check the per-step sums returned by `usage_total()`)."""

    schema_version: str = SCHEMA_VERSION
    id: str
    task_id: str | None = None
    task: str | None = None
    agent: Agent = msgspec.field(default_factory=Agent)
    model: str | None = None
    outcome: Outcome = msgspec.field(default_factory=Outcome)
    source: Source
    steps: list[Step] = msgspec.field(default_factory=list)
    reported_usage: Usage | None = None
    reported_cost: float | None = None
    parent_id: str | None = None
    subtrajectories: list[Trajectory] = msgspec.field(default_factory=list)
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)

    def __repr__(self) -> str:
        """Who, what and how long, not every step whole: a notebook echoes a run, and a real
        one's full repr runs to tens of thousands of characters (`msgspec.to_builtins` has it)."""
        fields = {
            "id": self.id,
            "format": self.source.format,
            "task_id": self.task_id,
            "model": self.model,
            "outcome": self.outcome.status,
        }
        shown = ", ".join(f"{name}={value!r}" for name, value in fields.items() if value)
        return f"Trajectory({shown}, steps={len(self.steps)})"

    @property
    def tool_steps(self) -> list[Step]:
        return [s for s in self.steps if s.kind == "tool"]

    def add_warnings(self, notes: Iterable[str]) -> None:
        """Notes appended to `metadata["warnings"]`; a value there that is not a list (a file's
        own, hostile or odd) becomes the first note, so no note is ever lost to it."""
        found = self.metadata.get("warnings")
        if not isinstance(found, list):
            found = [] if found is None else [str(found)]
            self.metadata["warnings"] = found
        found.extend(notes)

    def usage_total(self) -> Usage:
        """Per-step usage summed: zeros when no step carries any, even where the file states its
        own totals (`reported_usage`). `usage_known` is what the trace knows of its tokens."""
        total = Usage()
        for step in self.steps:
            if step.usage is not None:
                total = total + step.usage
        return total

    def usage_known(self) -> Usage | None:
        """Per-step usage summed; the file's own totals when no step carries usage (SWE-agent's
        `model_stats`); None when the trace says nothing about tokens."""
        if any(step.usage is not None for step in self.steps):
            return self.usage_total()
        return self.reported_usage

    def cost_total(self) -> float | None:
        costs = [s.cost for s in self.steps if s.cost is not None]
        if costs:
            return sum(costs)
        return self.reported_cost

    def category_counts(self) -> Counter[str]:
        return Counter(str(s.category) for s in self.steps if s.category is not None)


def stamps_before(steps: Iterable[Step]) -> dict[int, datetime]:
    """Step index → the last timestamp seen before that step (any kind of step): when the
    response that step belongs to was asked for."""
    before: dict[int, datetime] = {}
    last: datetime | None = None
    for step in steps:
        if last is not None:
            before[step.index] = last
        if step.timestamp is not None:
            last = step.timestamp
    return before
