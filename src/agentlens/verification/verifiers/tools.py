"""A check whose tool is not installed is *skipped*, never failed: the runner or linter it needs
(`python -m pytest` without pytest, `ruff` not on PATH) says nothing about the repository. The
result names what to install; aggregates leave a skipped check out (not scored)."""

from __future__ import annotations

import os
import re
from typing import Any

from agentlens.verification.sandbox import CommandResult
from agentlens.verification.verifiers.base import VerifierResult

NO_MODULE = re.compile(r"No module named '?([\w.]+)'?")
NOT_FOUND = re.compile(r"cannot start|execvp|not found|No such file or directory")
INSTALL = {"pytest": "pip install pytest", "ruff": "pip install ruff", "mypy": "pip install mypy"}


def missing_tool(run: CommandResult) -> str | None:
    """The tool `run` could not start (its executable, or the module of `python -m MODULE`)."""
    argv = run.command
    if not argv or run.timed_out:
        return None
    if argv[0] == "sh" and len(argv) > 2:  # a shell string: sh says which word it lacked
        found = re.search(r"(?:^|: )([\w.+-]+): (?:command )?not found", run.output)
        return found.group(1) if found and run.returncode == 127 else None
    if run.returncode in (None, 127) and NOT_FOUND.search(run.output):
        return os.path.basename(argv[0])
    if len(argv) > 2 and argv[1] == "-m" and run.returncode not in (0, None):
        found = NO_MODULE.search(run.output)
        module = argv[2].split(".")[0]
        if found and found.group(1).split(".")[0] == module:
            return module
    return None


def skipped(type_name: str, tool: str, metrics: dict[str, Any]) -> VerifierResult:
    hint = INSTALL.get(tool, f"install {tool} and put it on PATH")
    reason = f"skipped: install {tool} ({hint}); this check was not run and is not scored"
    return VerifierResult(type_name, "skipped", reason, {**metrics, "missing_tool": tool})
