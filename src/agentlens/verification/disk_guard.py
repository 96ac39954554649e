"""The disk guard: a command in the sandbox is stopped before it fills the host's disk.

`file_size_mb` bounds each file a command writes, not how many: a test wrote 64 MB files until
the disk was full. So every command that may write (a verifier's, the agent's shell, a `cmd:`
agent, a stdio MCP server) must leave `disk_free_mb` free on the disk of its writable folder,
checked every `POLL_S`, and is killed when it does not. A disk that already has less free when
the command starts is not the command's doing, and every command would be stopped at once: it
must then leave half of what was free."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from agentlens.verification.isolation import Limits

POLL_S = 0.2
MB = 1024 * 1024


@dataclass(frozen=True)
class DiskFloor:
    """The free space a command must leave on the disk holding `folder`; `short_at_start`: the
    disk had less than `disk_free_mb` free when it started, so the floor is half of that."""

    folder: Path
    floor_bytes: int
    short_at_start: bool = False

    @classmethod
    def at_start(cls, folder: Path, limits: Limits) -> DiskFloor:
        wanted, free = limits.disk_free_mb * MB, _free_bytes(folder)
        if free is None or free >= wanted:
            return cls(folder, wanted)
        return cls(folder, free // 2, short_at_start=True)

    def crossed(self) -> bool:
        free = _free_bytes(self.folder)
        return free is not None and free < self.floor_bytes

    def has_room_for(self, size_bytes: int) -> bool:
        """Whether writing `size_bytes` more would still leave the floor free."""
        free = _free_bytes(self.folder)
        return free is None or free - size_bytes >= self.floor_bytes

    def note(self) -> str:
        """AgentLens's line on a command it stopped (`CommandResult.stopped`), never its output."""
        left = self.floor_bytes // MB
        return f"stopped: under {left} MB left free on the disk it writes to ({self._why()})"

    def copy_note(self, what: str) -> str:
        """AgentLens's line on a command it never started: copying `what` for it would have
        crossed the floor."""
        left = f"under {self.floor_bytes // MB} MB free on its disk"
        return f"not started: copying {what} would leave {left} ({self._why()})"

    def _why(self) -> str:
        left = self.floor_bytes // MB
        if self.short_at_start:
            return f"half of the {2 * left} MB it had at the start, under the sandbox disk_free_mb"
        return "sandbox disk_free_mb"


def _free_bytes(folder: Path) -> int | None:
    try:
        found = os.statvfs(folder)
    except OSError:
        return None
    return found.f_bavail * found.f_frsize
