"""Readers for every supported trace format, each detecting its own input, plus the writers."""

from agentlens.formats.load import ReadFailure, ReadResult, iter_trace_paths, read_path
from agentlens.formats.registry import READERS, detect, get_reader
from agentlens.formats.stream import read_paths

__all__ = [
    "READERS",
    "ReadFailure",
    "ReadResult",
    "detect",
    "get_reader",
    "iter_trace_paths",
    "read_path",
    "read_paths",
]
