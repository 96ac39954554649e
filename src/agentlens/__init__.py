"""AgentLens: tell how an AI coding agent reached its result, not only whether it passed."""

from agentlens.errors import AgentLensError, SchemaError, TraceError, UnknownFormatError
from agentlens.formats import ReadFailure, ReadResult, read_path, read_paths
from agentlens.trajectory import (
    SCHEMA_VERSION,
    Agent,
    Outcome,
    Source,
    Step,
    ToolCategory,
    Trajectory,
    Usage,
)

__version__ = "0.1.0"

__all__ = [
    "SCHEMA_VERSION",
    "Agent",
    "AgentLensError",
    "Outcome",
    "ReadFailure",
    "ReadResult",
    "SchemaError",
    "Source",
    "Step",
    "ToolCategory",
    "TraceError",
    "Trajectory",
    "UnknownFormatError",
    "Usage",
    "__version__",
    "read_path",
    "read_paths",
]
