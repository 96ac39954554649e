"""The limits that keep a hostile MCP server from hanging or flooding a run; tests lower them.

Read as `limits.NAME` at the time of use, so a change here (or a test's monkeypatch) applies to
sessions already made."""

from __future__ import annotations

TIMEOUT_S = 60.0
"""Per request, and for the whole tool list; a server that takes longer is treated as failed."""
CLOSE_WAIT_S = 2.0
"""How long a server gets to stop by itself (its stdin closed, or its HTTP session deleted)."""
SETTLE_S = 0.5
"""How long an exited server's last stderr and exit code are waited for, for its error."""
MESSAGE_LIMIT = 32 * 1024 * 1024
"""The longest message read from a server (a tool result can be a whole file)."""
MAX_TOOLS = 1000
MAX_PAGES = 100
"""Of tools/list; a server that pages forever, or repeats a cursor, is cut off."""
DESCRIPTION_LIMIT = 2000
SCHEMA_LIMIT = 20_000
"""Bytes of a tool's inputSchema kept (the prompt shows a few hundred)."""
OUTPUT_LIMIT = 1_000_000
"""Characters of a tool's output kept, as of a shell command's."""
STDERR_LOG_LIMIT = 1_000_000
"""Bytes of a local server's stderr kept in its log: its start, then its last `STDERR_END`."""
STDERR_END = 4096
STDERR_TAIL = 400
"""Characters of its stderr's end an error shows."""
ERROR_CHARS = 300
"""Characters of what a server says in an error (a JSON-RPC error, an HTTP body)."""
