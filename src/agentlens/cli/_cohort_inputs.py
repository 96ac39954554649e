"""`load_inputs` for a cohort: the runs spilled to disk as they are read, a `RunRef` of each
kept (`agentlens.process.cohort_runs`), with the same progress bar, options and errors."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agentlens.cli._app import err_console
from agentlens.cli._inputs import PROGRESS_FROM, _context_option, refuse_empty
from agentlens.formats.load import iter_trace_paths
from agentlens.formats.registry import get_reader

if TYPE_CHECKING:
    from agentlens.formats.stream import TraceStream
    from agentlens.process.cohort_runs import RunSpill


@contextmanager
def spilled_inputs(
    paths: Sequence[str],
    *,
    lenient: bool,
    labels: Sequence[str],
    format: str | None,
) -> Iterator[tuple[TraceStream, RunSpill]]:
    """The batch read (failures, warnings, counts) and its runs spilled, refs kept."""
    from agentlens.process.cohort_runs import read_cohort

    if format:
        get_reader(format)  # an unknown name is a usage error before any file is read
    total = sum(1 for _ in iter_trace_paths(paths))
    columns = (TextColumn("reading traces"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    progress = Progress(*columns, console=err_console, transient=True,
                        disable=total < PROGRESS_FROM)  # fmt: skip
    with ExitStack() as stack:
        with progress:
            bar = progress.add_task("reading", total=total)
            result, spill = stack.enter_context(read_cohort(
                paths, format=format, lenient=lenient, labels=labels,
                strict=bool(_context_option("strict")),
                unevaluated=_context_option("unevaluated") or "unknown",
                on_file=lambda _: progress.advance(bar),
            ))  # fmt: skip
        refuse_empty(result, bool(spill.refs), paths)
        yield result, spill
