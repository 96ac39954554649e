"""What every demo section sees."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from agentlens.formats.load import ReadResult
from agentlens.trajectory import Trajectory


@dataclass
class DemoContext:
    """What every section sees: the data folder, what was read, and where to print."""

    data_dir: Path
    console: Console
    result: ReadResult
    seconds: float
    extras: dict[str, Any] = field(default_factory=dict)
    """Scratch space so a later section can reuse what an earlier one computed."""

    @property
    def trajectories(self) -> list[Trajectory]:
        return self.result.trajectories
