"""Error handling shared by all commands: user errors print one line; `--debug` shows tracebacks.

Commands return their exit code (0 ok, 1 some inputs failed or a question answered no, 2
usage/input error, 3 a bug of ours, reported in one line; 130 interrupted; 143 stopped by
SIGTERM, 129 by SIGHUP). A stop says so in one line: the command's own (what it kept, how to
resume: `StopSaid`), else `interrupted` or `stopped by SIGTERM`."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from agentlens import errors, stop_signals
from agentlens.cli._terminal_text import VisibleText
from agentlens.errors import AgentLensError

if TYPE_CHECKING:
    from rich.progress import Progress, ProgressColumn


class _StdoutConsole(Console):
    def print(self, *objects: Any, soft_wrap: bool | None = None, **options: Any) -> None:
        """A line of text is one line however long, in a pipe too (where rich wraps at 80
        columns): a log or a grep must not see `reference for … → PATH` cut in two. Tables
        and other renderables still fit the width."""
        if soft_wrap is None and all(isinstance(o, str | Text) for o in objects):
            soft_wrap = True
        super().print(*objects, soft_wrap=soft_wrap, **options)

    def on_broken_pipe(self) -> None:
        """Rich would exit 1 here; the reader has what it wanted (`| head`), so on to exit 0."""
        self.quiet = True
        silence_stdout()
        raise BrokenPipeError


# Results are mostly text from traces (ids, tool names, commands), printed as written: no emoji
# codes (`daemon:x:1` is not `daemon❌1`) and no markup (`[bold]` in an id stays); styles come from
# `Text` objects. Error lines keep markup, with the text in them `escape()`d.
console = _StdoutConsole(emoji=False, markup=False)
# Each message is one line however long (a path, a reason): a log or a grep must not see it cut.
err_console = Console(stderr=True, emoji=False, soft_wrap=True)
for _console in (console, err_console):  # no escape sequence from a trace reaches the terminal
    _console.push_render_hook(VisibleText())
# Below this width a table of many columns folds every cell: per-run lines read better.
WIDE = 120


def progress_bar(
    *columns: str | ProgressColumn, console: Console = err_console, hidden: bool = False
) -> Progress:
    """A bar that is gone when done, and never drawn where no one watches: rich leaves an empty
    line in a log or a pipe where a transient bar stood."""
    from rich.progress import Progress  # not at start-up: `--help` draws no bar

    return Progress(
        *columns, console=console, transient=True, disable=hidden or not console.is_terminal
    )


def run_cli(group: click.Group, argv: list[str]) -> int:
    argv = _debug_first(argv)
    debug = argv[:1] == ["--debug"]
    errors.set_debug(debug)  # before the command's lazy import, whose errors it governs too
    try:
        with _stop_signals_exit():
            result = group.main(args=argv, prog_name="agentlens", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except StopSaid as exc:
        return exc.code
    except Interrupted:
        _say_interrupted()
        return 130
    except stop_signals.StopSignalExit as exc:
        err_console.print(f"stopped by {exc.name}", highlight=False)
        return int(exc.code or 0)
    except click.exceptions.Abort as exc:  # a prompt: answered no, Ctrl-C, or no input left
        return _aborted(exc)
    except AgentLensError as exc:
        if debug:
            raise
        _error(str(exc))
        return 2
    except BrokenPipeError:
        silence_stdout()
        return 0
    except KeyboardInterrupt:
        _say_interrupted()
        return 130
    except OSError as exc:  # e.g. an output folder that cannot be made: the user can fix it
        if debug:
            raise
        _error(f"{exc.filename}: {exc.strerror}" if exc.filename else str(exc))
        return 2
    except Exception as exc:  # a bug of ours: one line, the traceback only with --debug
        if debug:
            raise
        _error(internal_error(exc))
        return 3
    return result if isinstance(result, int) else 0


class StopSaid(BaseException):
    """Ctrl-C or a stop signal ended a command that has said so in its own line (what it kept,
    how to resume it): `run_cli` adds none and exits with `code`. A BaseException, as the
    interrupt it stands for: no `except Exception` on the way out takes it for a failure."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class Interrupted(BaseException):
    """Ctrl-C in a command (`cli.LazyGroup.invoke`), passed by click untouched: as a
    KeyboardInterrupt click would print a blank line and make it an `Abort`."""


def stop_said(stop: BaseException) -> StopSaid:
    """To raise once the command's stop line is out, from the interrupt (130) or the stop
    signal's exit (its status) that ended it."""
    code = stop.code if isinstance(stop, SystemExit) and isinstance(stop.code, int) else 130
    return StopSaid(code)


def _aborted(exc: click.exceptions.Abort) -> int:
    """Ctrl-C at a prompt is an interrupt (130); a "no" to `confirm(abort=True)`, or a prompt
    with no input left, is the user's answer: `aborted`, exit 1 (not an interrupt's 130)."""
    if isinstance(exc.__context__ or exc.__cause__, KeyboardInterrupt):
        _say_interrupted()
        return 130
    err_console.print("aborted", highlight=False)
    return 1


def _say_interrupted() -> None:
    """After the terminal's `^C` echo, on a line of its own; in a log or a pipe, no blank line."""
    err_console.print(f"{chr(10) if err_console.is_terminal else ''}interrupted", highlight=False)


def internal_error(exc: BaseException) -> str:
    """How a bug of ours is said without `--debug`: one line, and what to do about it."""
    return (
        f"internal error ({type(exc).__name__}: {str(exc)[:200]}); "
        "this is an AgentLens bug: rerun with --debug and report the traceback"
    )


def _debug_first(argv: list[str]) -> list[str]:
    """`--debug` is the group's option, but users put it after the command too
    (`agentlens inspect --debug X`): moved to the front, it works wherever it stands before `--`."""
    end = argv.index("--") if "--" in argv else len(argv)
    if "--debug" not in argv[:end]:
        return argv
    return ["--debug", *[a for a in argv[:end] if a != "--debug"], *argv[end:]]


@contextlib.contextmanager
def _stop_signals_exit() -> Iterator[None]:
    """`kill PID` (SIGTERM) or a closed terminal (SIGHUP) ends the command as an exit rather than
    a kill, so what it holds goes with it: a cohort's spill folder, a pool's workers."""
    taken = stop_signals.take([signal.SIGTERM, signal.SIGHUP])
    try:
        yield
    finally:
        stop_signals.give_back(taken)


def silence_stdout() -> None:
    """The reader of stdout is gone (`agentlens … | head`): what is still buffered goes to
    /dev/null, so the interpreter's last flush cannot fail a finished command."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _error(message: str) -> None:
    say("error", message)


_LABEL_STYLES = {"error": "red", "failed": "red", "warning": "yellow"}


def say(label: str, message: str) -> None:
    """One `label: message` line on stderr (`error:`, `failed:`, `warning:`, `skipped:`), whole
    however long, with secrets masked: a message may quote an input (`found '...'`), and a file
    may be named by a key (`ghp_….jsonl`), whose name is then shown with only that part masked."""
    from agentlens import redaction

    if redaction.enabled():
        message = redaction.redact_text(message)
    style = _LABEL_STYLES.get(label)
    shown = f"[{style}]{label}:[/{style}]" if style else f"{label}:"
    err_console.print(f"{shown} {escape(message)}", highlight=False)
