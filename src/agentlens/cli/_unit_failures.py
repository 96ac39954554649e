"""One line per work unit or run that failed in a batch (`score`, `cohort`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentlens import errors
from agentlens.cli._app import err_console, say
from agentlens.engine import Failure

if TYPE_CHECKING:
    from agentlens.process.run_units import RunFailure


def report_unit_failures(failed: Sequence[tuple[str, Failure | RunFailure]], kept: str) -> int:
    """One line per failed work unit or run (what it was, the step, then the error), as
    `report_failures` does for files; `--debug` adds the worker's traceback. Returns the exit
    code (1 if any)."""
    debug = errors.debug()
    for what, failure in failed:
        line = (
            f"{what}: scoring failed: {failure}" if isinstance(failure, Failure) else str(failure)
        )
        say("failed", line)
        if debug and isinstance(failure, Failure):
            err_console.print(failure.traceback, highlight=False, markup=False)
    if failed:
        err_console.print(f"{len(failed)} failed; {kept}", highlight=False)
    return 1 if failed else 0
