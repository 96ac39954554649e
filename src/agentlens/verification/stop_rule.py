"""Why a guarded command was stopped, one rule for the sandbox's commands, the agent's shell and
stdio MCP servers: the disk floor before memory while it runs, and after it ended by itself a
process killed for memory just before (what is left of a command that lost one is no result)."""

from __future__ import annotations

from collections.abc import Iterable

from agentlens.verification.disk_guard import DiskFloor
from agentlens.verification.memory_group import MemoryGroup


def crossed_limit(floors: Iterable[DiskFloor], group: MemoryGroup) -> str:
    """While it runs: the note of the limit it crossed (the caller then kills it), "" if none."""
    crossed = next((floor for floor in floors if floor.crossed()), None)
    if crossed is not None:
        return crossed.note()
    return group.stop_note() if group.oom_killed() else ""


def stop_note(stopped: str, group: MemoryGroup, *, timed_out: bool) -> str:
    """Once it ended: `stopped` (what `crossed_limit` said), else its group's memory when a
    process was killed for it before the command ended by itself; "" when neither."""
    if stopped or timed_out:
        return stopped
    return group.stop_note() if group.oom_killed() else ""
