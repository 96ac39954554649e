"""A line-delimited trace whose writer has not finished: its last line stops part way.

An agent appends one JSON line per event, so a session still being written, or whose agent was
killed, ends in a line cut short. That line is the only thing lost: a batch read (`read_path`,
inside `noting_cut_lines()`) skips it, keeps the complete lines before it, and each trajectory
read from the file says so (`mark_cut_lines`): a warning naming the file and the line, and
`metadata["truncated"]` (`{"line": N, "bytes": B}`) on the run whose file was cut, so scores and
reports can tell a cut run from a finished one. A line that is broken, not cut short (bad JSON
before its end), or that is not the last line, still fails the file. A reader called directly,
outside a batch read, has nowhere to say it skipped a line, and fails on a cut line too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import NamedTuple

import msgspec

from agentlens.errors import TraceError
from agentlens.trajectory import Trajectory

_DECODER = msgspec.json.Decoder()


class CutLine(NamedTuple):
    path: str
    line: int
    size: int

    def note(self) -> str:
        return (
            f"line {self.line}: last line is incomplete ({self.size} bytes), ignored: "
            "session still being written?"
        )


_noted: ContextVar[list[CutLine] | None] = ContextVar("agentlens_cut_lines", default=None)


@contextmanager
def noting_cut_lines() -> Iterator[list[CutLine]]:
    """While open, a cut last line met by a JSONL helper is noted in the list, not raised."""
    found: list[CutLine] = []
    token = _noted.set(found)
    try:
        yield found
    finally:
        _noted.reset(token)


def cut_line(
    path: object,
    number: int,
    line: bytes,
    *,
    rest: Iterator[tuple[int, bytes]],
    read_before: bool,
) -> str | None:
    """For a line that failed to parse (`rest`: the numbered lines after it): None when it is
    skipped as a cut last line (only inside `noting_cut_lines`, after a complete line, and when
    its JSON stops early), else what to add to the error that fails the file: a hint when it is
    the last line and was cut short."""
    last = all(not later or later.isspace() for _, later in rest)  # stops at one that is not
    if not last or not ends_early(line):
        return ""
    noted = _noted.get()
    if noted is None or not read_before:
        return " (the last line, cut short: truncated?)"
    noted.append(CutLine(str(path), number, len(line)))
    return None


def ends_early(line: bytes) -> bool:
    """True when `line` is the start of a JSON value that the line ends before (a cut in the
    middle of a UTF-8 character included); False for JSON broken before its end."""
    try:
        _DECODER.decode(line)
    except msgspec.DecodeError as exc:
        return str(exc).startswith("Input data was truncated")
    except RecursionError:  # nested deeper than the decoder goes: broken, not cut
        return False
    return False


def mark_cut_lines(
    trajectories: list[Trajectory], cuts: Iterable[CutLine], *, lines_are_runs: bool = False
) -> None:
    """Each cut line as a warning on the trajectories read from the file, and `truncated` in the
    metadata of the one read from the cut file (a sub-agent's, when its file was the one cut).
    Where each line is a whole run (`lines_are_runs`), the cut one is a run lost, not a run cut
    short: the runs read are complete, and only the last carries the warning."""
    for cut in cuts:
        if not trajectories:  # nothing read to carry the note: say it as the file's failure
            raise TraceError(cut.path, f"{cut.note()}, and no run before it")
        owners = trajectories[-1:] if lines_are_runs else trajectories
        for trajectory in owners:
            note = cut.note() if trajectory.source.path == cut.path else f"{cut.path}: {cut.note()}"
            trajectory.add_warnings([note])
            cut_run = None if lines_are_runs else _read_from(trajectory, cut.path)
            if cut_run is not None:
                cut_run.metadata["truncated"] = {"line": cut.line, "bytes": cut.size}


def cut_at_line(trajectory: Trajectory) -> int | None:
    """The line where the trajectory's file was cut (its incomplete last line, skipped), if it
    was: `metadata["truncated"]`, as `mark_cut_lines` set it."""
    found = trajectory.metadata.get("truncated")
    line = found.get("line") if isinstance(found, dict) else None
    return line if isinstance(line, int) and not isinstance(line, bool) else None


def cut_note(line: int | None) -> str:
    """` (cut at line N)`, said after a run read from a cut trace (`cut_at_line`); else ""."""
    return f" (cut at line {line})" if line is not None else ""


def _read_from(trajectory: Trajectory, path: str) -> Trajectory | None:
    """The trajectory, or one of its sub-agents, read from `path`; the trajectory itself when
    none names it."""
    stack = [trajectory]
    while stack:
        found = stack.pop()
        if found.source.path == path:
            return found
        stack.extend(found.subtrajectories)
    return trajectory
