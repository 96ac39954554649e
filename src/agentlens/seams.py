"""The few seams of AgentLens, each a small Protocol. Implementations live one per file in the
package named after the seam (`formats/`, `process/`, `providers/`, `store/`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar, Protocol, runtime_checkable

from agentlens.trajectory import Trajectory


@runtime_checkable
class TraceReader(Protocol):
    """Reads one source format. Detection asks `handles_location` and `handles_bytes` in turn."""

    name: ClassVar[str]

    @classmethod
    def handles_location(cls, path: Path) -> bool:
        """True when the file name alone is consistent with this format (cheap, no I/O)."""
        ...

    @classmethod
    def handles_bytes(cls, head: bytes) -> bool:
        """True when the first bytes (up to 64 KiB) look like this format."""
        ...

    def read(self, path: Path, data: bytes) -> Iterator[Trajectory]:
        """Yield every trajectory in the file; raise `TraceError` subclasses on bad input."""
        ...
