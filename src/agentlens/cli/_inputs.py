"""Shared input handling: read paths with a progress bar, apply outcome sidecars, report failures."""

from __future__ import annotations

from collections.abc import Sequence

from rich.progress import Progress

from agentlens.cli._app import err_console
from agentlens.errors import TraceError, UnknownFormatError
from agentlens.formats.load import ReadFailure, ReadResult, iter_trace_paths, read_path


def load_inputs(
    paths: Sequence[str],
    *,
    lenient: bool = False,
    labels: Sequence[str] = (),
    format: str | None = None,
) -> ReadResult:
    files = list(iter_trace_paths(paths))
    result = ReadResult()
    with Progress(console=err_console, transient=True, disable=len(files) < 50) as progress:
        task = progress.add_task("reading traces", total=len(files))
        for path, explicit in files:
            try:
                result.trajectories.extend(read_path(path, format=format, lenient=lenient))
            except TraceError as exc:
                if not explicit and isinstance(exc, UnknownFormatError):
                    result.skipped.append(f"{path}: {exc.reason}")
                else:
                    result.failures.append(ReadFailure(str(path), exc.format, exc.reason, exc))
            progress.advance(task)
    if labels:
        from agentlens.outcomes import apply_labels

        apply_labels(result.trajectories, labels)
    return result


def report_failures(result: ReadResult) -> int:
    """Print one line per failed file (after the results) and return the exit code."""
    for failure in result.failures:
        fmt = f" [{failure.format}]" if failure.format else ""
        err_console.print(
            f"[red]failed:[/red] {failure.path}{fmt}: {failure.reason}", highlight=False
        )
    if result.skipped:
        err_console.print(f"skipped {len(result.skipped)} non-trace files", highlight=False)
    if result.failures:
        err_console.print(
            f"{len(result.failures)} of {len(result.failures) + len(result.trajectories)} inputs failed"
        )
        return 1
    return 0
