"""A check whose tool is not installed is *skipped*, never failed: the runner or linter it needs
(`python -m pytest` without pytest, `ruff` not on PATH) says nothing about the repository. The
result names what to install; aggregates leave a skipped check out (not scored)."""

from __future__ import annotations

import os
import re
import shlex
import time
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from agentlens.verification.sandbox import OVERTIME_S, CommandResult, run_in_scratch
from agentlens.verification.verifiers.base import VerifierResult

NO_MODULE = re.compile(r"No module named '?([\w.]+)'?")
NOT_FOUND = re.compile(r"execvp|not found|No such file or directory")
PYTHON = re.compile(r"python[\d.]*$")
# exits 0 iff the module is installed; `-I`: no code of the agent's folder or PYTHONPATH runs
FIND_MODULE = "import importlib.util, sys; sys.exit(importlib.util.find_spec(sys.argv[1]) is None)"
INSTALL = {"pytest": "pip install pytest", "ruff": "pip install ruff", "mypy": "pip install mypy"}


@dataclass(frozen=True)
class ToolProbe:
    """What the probe of a tool the output claims is missing found: `missing`, the tool it
    found missing, or `unsettled`, why it could not tell (it ran out of time, was stopped)."""

    missing: str | None = None
    unsettled: str = ""

    def note(self) -> str:
        """`; ` and the unsettled probe for a reason, or "": a check that then said only `no
        pytest result found in the output` hid that its tool was never found."""
        return f"; {self.unsettled}" if self.unsettled else ""


def missing_tool(
    run: CommandResult,
    repo: Path,
    env: Mapping[str, str] | None = None,
    workdir: str = ".",
    *,
    deadline: float,
) -> ToolProbe:
    """The tool `run` could not start (its executable, or the module of `python -m MODULE`),
    once a probe in the same place (a copy of `repo`, `workdir`, `env`) finds it missing: the
    output that says so is the agent's to write (a conftest's `import pytest.x`, mypy quoting
    a string), and a skipped check is not scored. The probe (its copy too) ends by `deadline`,
    the verifier's, and `sandbox.OVERTIME_S`: its Python may be the agent's (`venv_path`),
    and it had 60 s of its own (a check with a 5 s timeout took 60.5 s)."""
    claimed = _claimed_missing(run)
    if claimed is None:
        return ToolProbe()
    tool, probe = claimed
    left = deadline + OVERTIME_S - time.monotonic()
    if left <= 0:
        return _unsettled(tool, "no time was left to probe for it")
    checked, _ = run_in_scratch(repo, probe, timeout_s=left, workdir=workdir, env=env)
    if checked.stopped:  # AgentLens's line: a copy that took the whole time, a memory limit
        return _unsettled(tool, f"its probe ended: {checked.stopped}")
    if checked.timed_out:
        return _unsettled(tool, f"its probe timed out after {checked.duration_s:.1f} s")
    return ToolProbe(missing=tool if checked.returncode != 0 else None)


def _unsettled(tool: str, why: str) -> ToolProbe:
    return ToolProbe(unsettled=f"the output says {tool} is missing, but {why} (not skipped)")


def _claimed_missing(run: CommandResult) -> tuple[str, list[str]] | None:
    """What the output says could not start, and a command that exits 0 iff it can."""
    argv = run.command
    if not argv or run.timed_out or run.stopped:
        return None
    if argv[0] == "sh" and len(argv) > 2:  # a shell string: sh says which word it lacked
        found = re.search(r"(?:^|: )([\w.+-]+): (?:command )?not found", run.output)
        if found is not None and run.returncode == 127:
            return found.group(1), _find_program(found.group(1))
        try:
            words = shlex.split(argv[2])
        except ValueError:  # unbalanced quotes: sh itself would have refused it
            return None
        return _missing_module(run, _run_modules(words, "python"))
    if run.returncode == 127 and NOT_FOUND.search(run.output):
        return os.path.basename(argv[0]), _find_program(argv[0])
    return _missing_module(run, _run_modules(argv[:3], argv[0]))


def _run_modules(words: list[str], python: str) -> dict[str, str]:
    """Each top-level module the words run with `-m MODULE`, and the Python that runs it (the
    last `python…` word before it, else `python`): in a shell string, any of its parts, and
    `python -m coverage run -m pytest` runs both in that `python`."""
    modules: dict[str, str] = {}
    for word, after in pairwise(words):
        if PYTHON.match(os.path.basename(word)):
            python = word
        if word == "-m":
            modules.setdefault(after.split(".")[0], python)
    return modules


def _missing_module(run: CommandResult, modules: dict[str, str]) -> tuple[str, list[str]] | None:
    """A module the command runs that its Python says it could not find: the tool, not the
    project's own missing import (`No module named 'nosuchdep'` from a test file)."""
    if run.returncode in (0, None):
        return None
    found = NO_MODULE.search(run.output)
    module = found.group(1).split(".")[0] if found else ""
    if module not in modules:
        return None
    return module, [modules[module], "-I", "-c", FIND_MODULE, module]


def _find_program(name: str) -> list[str]:
    return ["sh", "-c", 'command -v "$1"', "sh", name]


def skipped(type_name: str, tool: str, metrics: dict[str, Any]) -> VerifierResult:
    hint = INSTALL.get(tool, f"install {tool} and put it on PATH")
    reason = f"skipped: install {tool} ({hint}); this check was not run and is not scored"
    return VerifierResult(type_name, "skipped", reason, {**metrics, "missing_tool": tool})
