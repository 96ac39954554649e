"""Shared input handling: read paths with a progress bar, apply outcome sidecars, report failures."""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

from agentlens import errors
from agentlens.cli._app import err_console, progress_bar, say
from agentlens.errors import ConfigError
from agentlens.formats.load import ReadFailure, ReadReport, ReadResult, iter_trace_paths
from agentlens.formats.registry import get_reader
from agentlens.formats.stream import TraceStream, stream_paths
from agentlens.list_text import counted
from agentlens.visible_text import one_line

PROGRESS_FROM = 50
"""Show a progress bar only for runs of at least this many files."""

F = TypeVar("F", bound=Callable[..., Any])


def _remember(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    # kept in the context, read by `load_inputs`: no command signature needs to change
    ctx.meta[f"agentlens.{param.name}"] = value


def read_options(command: F) -> F:
    """`--lenient`, `--format`, `--labels` (the `load_inputs` keywords), `--unevaluated` and
    `--strict` as options."""
    return _with_options(command, (UNEVALUATED_OPTION, *_file_options(), LABELS_OPTION))


def file_options(command: F) -> F:
    """`read_options` less the two that set outcomes (`--labels`, `--unevaluated`), for a command
    that shows none: there they would do nothing."""
    return _with_options(command, _file_options())


def _with_options(command: F, options: Sequence[Callable[[F], F]]) -> F:
    for option in reversed(options):
        command = option(command)
    return command


def _file_options() -> tuple[Callable[[F], F], ...]:
    return (
        click.option(
            "--strict",
            is_flag=True,
            expose_value=False,
            callback=_remember,
            help="Fail on any walked file that looks like a trace but that no reader takes.",
        ),
        click.option(
            "--lenient",
            is_flag=True,
            help="With --format or --strict: read a non-conformant file (an ATIF look-alike) "
            "best-effort, as a detected one is read anyway, with a warning.",
        ),
        click.option(
            "--format",
            "format",
            default=None,
            help="Skip detection: read every file as FORMAT.",
        ),
    )


UNEVALUATED_OPTION = click.option(
    "--unevaluated",
    type=click.Choice(["unknown", "failed"]),
    default="unknown",
    expose_value=False,
    callback=_remember,
    help="Outcome of runs a report never evaluated (empty patch, incomplete).",
)
LABELS_OPTION = click.option(
    "--labels",
    multiple=True,
    help="Outcome sidecar: results.json, report, CSV, logs dir.",
)


def load_inputs(
    paths: Sequence[str],
    *,
    lenient: bool = False,
    labels: Sequence[str] = (),
    format: str | None = None,
) -> ReadResult:
    """`stream_inputs`, every trajectory in one list: for commands that need them all at once."""
    return stream_inputs(paths, lenient=lenient, labels=labels, format=format).collect()


def stream_inputs(
    paths: Sequence[str],
    *,
    lenient: bool = False,
    labels: Sequence[str] = (),
    format: str | None = None,
) -> TraceStream:
    """Read files, directories (walked, sidecars skipped) and globs; label outcomes from sidecars.
    The trajectories come out of the stream one at a time (`agentlens.formats.stream`)."""
    with reading_progress(paths, format) as advance:
        result = stream_paths(
            paths,
            format=format,
            lenient=lenient,
            labels=labels,
            on_file=advance,
            strict=bool(_context_option("strict")),
            unevaluated=_context_option("unevaluated") or "unknown",
        )
    refuse_empty(result, bool(result.count), paths)
    return result


@contextmanager
def reading_progress(paths: Sequence[str], format: str | None) -> Iterator[Callable[[Path], None]]:
    """The "reading traces" bar over the files `paths` name (shown from `PROGRESS_FROM` files on),
    as the `on_file` callback of a read; an unknown `format` is a usage error before any file."""
    if format:
        get_reader(format)
    total = sum(1 for _ in iter_trace_paths(paths))
    columns = (TextColumn("reading traces"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    progress = progress_bar(*columns, hidden=total < PROGRESS_FROM)
    with progress:
        bar = progress.add_task("reading", total=total)
        yield lambda _: progress.advance(bar)


def refuse_empty(result: ReadReport, found: bool, paths: Sequence[str]) -> None:
    """Nothing read and nothing failed (an empty or mistyped folder): one usage error saying
    what was there instead."""
    if found or result.failures:
        return
    for line in result.unread:
        _warn(line)
    if errors.debug():  # what was there instead, as `report_failures` names it
        _name_skipped(result)
    else:  # with nothing read, why each file was skipped is the answer, not noise
        _name_first_skipped(result)
    parts = [f"{len(result.unread)} unread trace-like"] if result.unread else []
    parts += [f"{non_traces(result)} skipped"] if result.skipped else []
    detail = f" ({'; '.join(parts)})" if parts else ""
    raise ConfigError(f"no trace files in {', '.join(map(str, paths))}{detail}")


def _context_option(name: str) -> Any:
    context = click.get_current_context(silent=True)
    return context.meta.get(f"agentlens.{name}") if context else None


def non_traces(result: ReadReport) -> str:
    count = len(result.skipped)
    return counted(count, "non-trace file")


def _warn(line: str) -> None:
    say("warning", one_line(line))


def report_failures(result: ReadReport, *, debug: bool | None = None) -> int:
    """Print one line per failed file (after the results) and return the exit code (1 if any).

    With `--debug` each line is followed by the traceback of the error that caused it.
    """
    debug = errors.debug() if debug is None else debug
    for line, count in result.warnings.items():
        _warn(line + (f" ({count} trajectories)" if count > 1 else ""))
    for line in result.unread:
        _warn(f"{line} (--strict makes this an error)")
    failures = [failure for failure in result.failures if not failure.repeat]
    for failure in result.failures:
        if failure.repeat:
            say("note", failure_line(failure))
            continue
        say("failed", failure_line(failure))
        if debug and failure.error is not None:
            err_console.print(_traceback(failure), highlight=False, markup=False)
    if debug:
        _name_skipped(result)
    if result.skipped:
        err_console.print(f"skipped {non_traces(result)}", highlight=False)
    if failures:
        err_console.print(
            f"{counted(len(failures), 'file')} failed; {counted(result.n_read, 'trajectory')} read"
        )
        return 1
    return 0


def _name_skipped(result: ReadReport) -> None:
    for line in (*result.skipped, *result.sidecars):
        say("skipped", one_line(line))


FIRST_SKIPPED = 5


def _name_first_skipped(result: ReadReport) -> None:
    for line in result.skipped[:FIRST_SKIPPED]:
        say("skipped", one_line(line))
    if len(result.skipped) > FIRST_SKIPPED:
        err_console.print(f"(--debug names all {len(result.skipped)})", highlight=False)


def failure_line(failure: ReadFailure) -> str:
    """`path [format]: reason`, one line whatever newline the file's name holds (the demo's
    failure lines showed it raw); `say` masks a secret in the file's name as it prints it."""
    return one_line(f"{failure.path}{_format_bracket(failure)}: {failure.reason}")


def _format_bracket(failure: ReadFailure) -> str:
    if not failure.detected:
        return ""
    return f" [{failure.format}]" if failure.format else " [format unknown]"


def _traceback(failure: ReadFailure) -> str:
    assert failure.error is not None
    remote = getattr(failure.error, "remote_traceback", None)  # `pooled_read.WorkerReadError`
    if remote is not None:
        return str(remote)
    error = failure.error.__cause__ or failure.error
    return "".join(traceback.format_exception(error)).rstrip()
