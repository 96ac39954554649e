"""A check whose tool is not installed is *skipped*, never failed: the runner or linter it needs
(`python -m pytest` without pytest, `ruff` not on PATH) says nothing about the repository. The
result names what to install; aggregates leave a skipped check out (not scored)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentlens.verification.sandbox import CommandResult, run_in_scratch
from agentlens.verification.verifiers.base import VerifierResult

NO_MODULE = re.compile(r"No module named '?([\w.]+)'?")
NOT_FOUND = re.compile(r"cannot start|execvp|not found|No such file or directory")
# exits 0 iff the module is installed; `-I`: no code of the agent's folder or PYTHONPATH runs
FIND_MODULE = "import importlib.util, sys; sys.exit(importlib.util.find_spec(sys.argv[1]) is None)"
PROBE_TIMEOUT_S = 60.0
INSTALL = {"pytest": "pip install pytest", "ruff": "pip install ruff", "mypy": "pip install mypy"}


def missing_tool(
    run: CommandResult, repo: Path, env: Mapping[str, str] | None = None, workdir: str = "."
) -> str | None:
    """The tool `run` could not start (its executable, or the module of `python -m MODULE`),
    once a probe in the same place (a copy of `repo`, `workdir`, `env`) finds it missing: the
    output that says so is the agent's to write (a conftest's `import pytest.x`, mypy quoting
    a string), and a skipped check is not scored."""
    claimed = _claimed_missing(run)
    if claimed is None:
        return None
    tool, probe = claimed
    checked, _ = run_in_scratch(repo, probe, timeout_s=PROBE_TIMEOUT_S, workdir=workdir, env=env)
    return tool if checked.returncode != 0 and not checked.timed_out else None


def _claimed_missing(run: CommandResult) -> tuple[str, list[str]] | None:
    """What the output says could not start, and a command that exits 0 iff it can."""
    argv = run.command
    if not argv or run.timed_out:
        return None
    if argv[0] == "sh" and len(argv) > 2:  # a shell string: sh says which word it lacked
        found = re.search(r"(?:^|: )([\w.+-]+): (?:command )?not found", run.output)
        if found is None or run.returncode != 127:
            return None
        return found.group(1), _find_program(found.group(1))
    if run.returncode in (None, 127) and NOT_FOUND.search(run.output):
        return os.path.basename(argv[0]), _find_program(argv[0])
    if len(argv) > 2 and argv[1] == "-m" and run.returncode not in (0, None):
        found = NO_MODULE.search(run.output)
        module = argv[2].split(".")[0]
        if found and found.group(1).split(".")[0] == module:
            return module, [argv[0], "-I", "-c", FIND_MODULE, module]
    return None


def _find_program(name: str) -> list[str]:
    return ["sh", "-c", 'command -v "$1"', "sh", name]


def skipped(type_name: str, tool: str, metrics: dict[str, Any]) -> VerifierResult:
    hint = INSTALL.get(tool, f"install {tool} and put it on PATH")
    reason = f"skipped: install {tool} ({hint}); this check was not run and is not scored"
    return VerifierResult(type_name, "skipped", reason, {**metrics, "missing_tool": tool})
