"""`load_inputs` for a cohort: the runs read on the engine's workers and spilled to disk, a
`RunRef` of each kept (`agentlens.process.cohort_runs`), with the same progress bar, options
and errors."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING

from agentlens.cli._inputs import _context_option, reading_progress, refuse_empty

if TYPE_CHECKING:
    from agentlens.formats.pooled_read import ReadSummary
    from agentlens.process.cohort_runs import RunSpill
    from agentlens.seams import Engine


@contextmanager
def spilled_inputs(
    paths: Sequence[str],
    engine: Engine,
    *,
    lenient: bool,
    labels: Sequence[str],
    format: str | None,
) -> Iterator[tuple[ReadSummary, RunSpill]]:
    """The batch read (failures, warnings, counts) and its runs spilled, refs kept."""
    from agentlens.process.cohort_runs import read_cohort

    with ExitStack() as stack:
        with reading_progress(paths, format) as advance:
            result, spill = stack.enter_context(read_cohort(
                paths, engine=engine, format=format, lenient=lenient, labels=labels,
                strict=bool(_context_option("strict")),
                unevaluated=_context_option("unevaluated") or "unknown",
                on_file=advance,
            ))  # fmt: skip
        refuse_empty(result, bool(spill.refs), paths)
        yield result, spill
