"""What the built-in readers share: the `lenient` switch and detection by file suffix.

The contract is the `TraceReader` Protocol in `agentlens.seams`; a reader need not subclass this.
Each built-in reader names its `suffixes` and keeps its own `handles_bytes` and `read`.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar


class SuffixReader:
    name: ClassVar[str]
    suffixes: ClassVar[tuple[str, ...]]
    lines_are_runs: ClassVar[bool] = False
    """Each JSONL line is a whole run (not an event of one): a cut last line is a run lost, and
    the runs read before it are complete (`_unfinished.mark_cut_lines`)."""

    def __init__(self, *, lenient: bool = False) -> None:
        self.lenient = lenient

    @classmethod
    def handles_location(cls, path: Path) -> bool:
        """True when the file's suffix is one of the format's (cheap, no I/O)."""
        return path.suffix in cls.suffixes
