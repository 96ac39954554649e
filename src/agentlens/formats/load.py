"""Turn user paths (files, directories, globs) into trajectories; a bad file never stops a batch."""

from __future__ import annotations

import glob
import os
import stat
import traceback
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, NamedTuple, Protocol, cast

import msgspec

from agentlens import redaction
from agentlens.bounded_read import NotRegularFile, Opened, open_regular
from agentlens.errors import AgentLensError, TraceError, UnknownFormatError
from agentlens.formats._deep_detect import detect_in_file, telltale_of
from agentlens.formats._json import LargeFile
from agentlens.formats._signed import first_negative
from agentlens.formats._unfinished import mark_cut_lines, noting_cut_lines
from agentlens.formats.atif import referrer_of
from agentlens.formats.claude_code import session_of
from agentlens.formats.folder_listing import is_dir, listing
from agentlens.formats.limits import check_file_size
from agentlens.formats.path_glob import expand, typed_part
from agentlens.formats.registry import HEAD_BYTES, UTF8_BOM, get_reader
from agentlens.list_text import counted
from agentlens.os_names import has_surrogates, printable, printable_all
from agentlens.trajectory import Trajectory

if TYPE_CHECKING:
    from agentlens.seams import TraceReader

# Files that travel with traces but are not traces: skipped silently when walking a directory.
SIDECAR_NAMES = {
    "results.json",
    "report.json",
    "results_summary.json",
    "metadata.yaml",
    "index.json",
    "manifest.json",
    "metrics.json",
    "config.json",
    "preds.json",
    "all_preds.jsonl",
    "dataset_summary_upstream.json",
}
SIDECAR_REASON = "sidecar (an outcome, metadata or notes file, by its name)"
SIDECAR_SUFFIXES = {".md", ".csv", ".tsv", ".log", ".txt", ".yaml", ".yml", ".py", ".cast", ""}


@dataclass(frozen=True)
class ReadFailure:
    path: str
    format: str | None
    reason: str
    error: BaseException | None
    detected: bool = True
    """False when no reader looked at the file (named again, or a pattern naming nothing): its
    line then names no format, known or unknown."""
    repeat: bool = False
    """A file named again (twice, or through a link), read once: a note, not a failure of the
    command, as nothing of it was lost."""


@dataclass(repr=False)
class ReadResult:
    """What a batch read gave. Every walked file that gave no trajectory is in one list, as
    `path: reason`: `failures` (broken traces), `unread` (looks like a trace, yet no reader
    takes it: warned about, and a failure under `strict`), `skipped` (not a trace) or
    `sidecars` (an outcome or metadata file, by its name)."""

    trajectories: list[Trajectory] = field(default_factory=list)
    failures: list[ReadFailure] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)
    sidecars: list[str] = field(default_factory=list)

    @property
    def warnings(self) -> Counter[str]:
        """Problems that cost part of a trajectory but not the file (a broken sub-agent file, a
        skipped line), as readers note them in `metadata["warnings"]`: each line names the file,
        with how many trajectories carry it."""
        found: Counter[str] = Counter()
        for traj in self.trajectories:
            found.update(warning_lines(traj))
        return found

    @property
    def n_read(self) -> int:
        return len(self.trajectories)

    def __repr__(self) -> str:
        """Counts, not every trajectory whole: a notebook echoes a result, and the dev set's
        whole repr is 3.6 MB."""
        counts = (
            f"{counted(len(self.trajectories), 'trajectory')}, "
            f"{counted(len(self.failures), 'failure')}, {len(self.skipped)} skipped, "
            f"{len(self.unread)} unread, {counted(len(self.sidecars), 'sidecar')}"
        )
        return f"<ReadResult: {counts}>"


def warning_lines(traj: Trajectory) -> list[str]:
    """The trajectory's `metadata["warnings"]`, each naming its file."""
    notes = traj.metadata.get("warnings")
    if not isinstance(notes, list):
        return []
    path = traj.source.path
    return [n if path in n else f"{path}: {n}" for n in map(str, notes)]


def is_sidecar(path: Path) -> bool:
    name = path.name.lower()
    return name in SIDECAR_NAMES or path.suffix.lower() in SIDECAR_SUFFIXES or name.startswith(".")


def is_pattern(text: str) -> bool:
    """Whether `text` is read as a glob, by the rule reading follows (`_named_by`): it has
    wildcards, and names more than a real file as written (`run[1].json`, with no `run1.json`
    beside it, is that file)."""
    return _named_by(text).by_glob


class _Named(NamedTuple):
    """What one path the user gave names (`_named_by`)."""

    written: list[str]
    """The path as written: one without wildcards, or a real name with them that is not among
    its glob's matches."""
    matched: list[str]
    """The glob's matches, where it is read as one."""

    @property
    def by_glob(self) -> bool:
        return bool(self.matched) or not self.written


def _named_by(text: str) -> _Named:
    """The paths `text` names. A real name with wildcards (`run[1].json`) is named as written,
    as a shell takes it; and the glob's matches too where there are others: `find -print0 |
    xargs -0` names `runs/a.json runs/[ab].json`, and reading only the matches read `a.json`
    twice and `[ab].json` never. A name the glob matches itself (a file a run folder holds named
    `*.json`) is read as one of the matches: it does not stand for the `runs/*.json` meant."""
    if not glob.has_magic(text):
        return _Named([text], [])
    matches = sorted(expand(text))
    if not os.path.lexists(text):
        return _Named([], matches)
    written = os.path.normpath(text)
    others = [match for match in matches if os.path.normpath(match) != written]
    if not others:
        return _Named([text], [])
    return _Named([], matches) if len(others) < len(matches) else _Named([text], matches)


def unmatched_patterns(specs: Iterable[str | Path]) -> list[ReadFailure]:
    """A failure for each glob among `specs` that matches no file."""
    return [
        ReadFailure(printable(text), None, _unmatched(text), None, detected=False)
        for text in map(str, specs)
        if _names_nothing(text)
    ]


def _names_nothing(text: str) -> bool:
    """Whether `_named_by(text)` is empty, asked without expanding the whole glob: its first
    match answers (reading expands it again, so a `runs/**` was listed whole twice)."""
    return glob.has_magic(text) and not os.path.lexists(text) and next(expand(text), None) is None


def _unmatched(pattern: str) -> str:
    """Why a pattern named nothing, with the pattern that would name a real name holding a `[`:
    in a pattern, `[` opens a set of characters (`run[1]/*` names `run1/x`, not `run[1]/x`)."""
    literal = pattern.replace("[", "[[]")
    if literal != pattern and next(expand(literal), None) is not None:
        return f"no file matches this pattern; {printable(literal)} would (`[[]` is a `[`)"
    return "no file matches this pattern"


class TraceFile(NamedTuple):
    """A file of a batch, as the batch reads it (`read_one`)."""

    path: Path
    explicit: bool
    """False for a file found by walking or globbing, whose sidecars are skipped, not failed."""
    inside: Path | None
    """The file of another run that reads this one as its sub-agent, when that file is read
    too (walked in the same folder, or globbed): this one is then not read on its own."""


def iter_trace_paths(
    specs: Iterable[str | Path], repeats: list[ReadFailure] | None = None
) -> Iterator[tuple[Path, bool]]:
    """(path, explicit) of each `trace_files`."""
    return ((found.path, found.explicit) for found in trace_files(specs, repeats))


def trace_files(
    specs: Iterable[str | Path],
    repeats: list[ReadFailure] | None = None,
    sizes: dict[str, int] | None = None,
) -> Iterator[TraceFile]:
    """Every file named, globbed or found under a directory, each file once: one reached again
    (named twice, or through a link) is noted in `repeats` (a `ReadFailure.repeat`), as a second
    copy would be scored against itself. `sizes` gets the size of each file yielded that could be `stat`ed (what the
    check of copied files needs, `protocol_notes.copied_files`), by its path."""
    # hash of (device, inode) -> hash of the path it was first read by: a few bytes a file
    seen: dict[int, int] = {}
    for found, info in _named_paths(specs):
        try:
            info = info if info is not None else os.stat(found.path)
        except OSError:  # missing or unreadable: reading it says why
            yield found
            continue
        key = hash((info.st_dev, info.st_ino))
        spelling = hash(os.path.abspath(found.path))
        if key not in seen:
            seen[key] = spelling
            if sizes is not None:
                sizes[str(found.path)] = info.st_size
            yield found
        elif stat.S_ISLNK(info.st_mode):  # a link to a folder, met again: skipped, never read
            continue
        elif repeats is not None:
            reason = _repeat_reason(found.path, same_spelling=seen[key] == spelling)
            name = printable(str(found.path))
            repeats.append(ReadFailure(name, None, reason, None, detected=False, repeat=True))


def _repeat_reason(path: Path, *, same_spelling: bool) -> str:
    """The real file is named only when this path reached it another way (a link): a data
    folder that is itself a link makes every real path differ, named twice or not."""
    real = os.path.realpath(path)
    if same_spelling or real == os.path.abspath(path):
        return "named again: read once"
    return f"named again, as {printable(real)}: read once"


def _named_paths(specs: Iterable[str | Path]) -> Iterator[tuple[TraceFile, os.stat_result | None]]:
    """Every file named, with its `stat` if the walk took it already."""
    named = [(str(spec), _named_by(str(spec))) for spec in specs]
    written = {os.path.normpath(text) for _, found in named for text in found.written}
    for spec, found in named:
        for text in found.written:
            path = Path(text)
            if is_dir(path):
                yield from _walked_less_named(path, written)
            else:
                yield TraceFile(path, True, None), None
        yield from _globbed(spec, found, written)


def _globbed(
    spec: str, found: _Named, written: set[str]
) -> Iterator[tuple[TraceFile, os.stat_result | None]]:
    """The files of the glob's matches in `found`, less those `written` names: a match also
    named is read as named (a link to a folder, walked; not also skipped as a glob met it)."""
    typed = os.path.normpath(typed_part(spec))  # `data/**` names `data`, as typed
    for match in found.matched:
        path = Path(match)
        also_named = os.path.normpath(match) in written
        if found.written and also_named:
            continue  # `a.json` named beside `[ab].json`, a real name: no repeat of it
        # `os.path.islink`: `Path.is_symlink` raises where a folder may not be searched
        met_by_glob = os.path.islink(path) and os.path.normpath(match) != typed
        if is_dir(path) and not met_by_glob:
            yield from ((_walked(p, path), info) for p, info in _walk(path))
        elif is_dir(path) and also_named:
            continue
        else:  # a link to a folder, by its own `lstat`: skipped, as `_walk` skips it
            info = os.lstat(path) if is_dir(path) else None
            yield TraceFile(path, False, reader_of(path)), info


def _walked_less_named(
    root: Path, written: set[str]
) -> Iterator[tuple[TraceFile, os.stat_result | None]]:
    """The files of the walk of `root`, less a link to a folder that was also named: it is read
    as named, not also skipped as a link the walk met (`inspect runs/latest runs`)."""
    for path, info in _walk(root):
        named_link = info is not None and stat.S_ISLNK(info.st_mode) and is_dir(path)
        if not (named_link and os.path.normpath(path) in written):
            yield _walked(path, root), info


def _walked(path: Path, root: Path) -> TraceFile:
    """A walked sub-agent file is read on its own, as if named, when the file that reads it lies
    outside the walked folder."""
    reader = reader_of(path)
    if reader is not None and not reader.is_relative_to(os.path.abspath(root)):
        return TraceFile(path, True, None)
    return TraceFile(path, False, reader)


def reader_of(path: Path) -> Path | None:
    """The file of another run that reads `path` as one of its sub-agents: a Claude Code session
    (`<session>/subagents/agent-*.jsonl`) or a Harbor ATIF trajectory (`trajectory.<sub>.json`)."""
    return session_of(path) or referrer_of(path)


def _walk(root: Path) -> Iterator[tuple[Path, os.stat_result | None]]:
    """Every file below `root`, each with its `stat` (the one the batch asks of it; none for a
    link to nothing), sidecars included: the batch names what it skips, and reading a FIFO, a
    device or a broken link found by walking skips it with its reason (`NotAFileError`), never
    opening it. A folder that cannot be listed is yielded too (no `stat`), so that reading it
    names it and says why. Folders wait on a stack, not in nested calls (as `os.walk`'s do
    before Python 3.12): a tree 1000 folders deep stopped the batch with a `RecursionError`."""
    folders = [str(root)]
    while folders:
        folder = folders.pop()
        try:
            files, links, below = listing(folder)
        except OSError:
            yield Path(folder), None
            continue
        yield from ((Path(link), os.lstat(link)) for link in links)  # named, not walked
        for name in files:
            try:
                yield Path(name), os.stat(name)
            except OSError:  # a link to nothing, or a loop
                yield Path(name), None
        folders += reversed(below)


def read_path(
    path: str | Path, *, format: str | None = None, lenient: bool = False, strict: bool = False
) -> list[Trajectory]:
    """Read every trajectory in one file. Raises a `TraceError` naming the file and the reason.

    The first 64 KiB are read to detect the format; when no reader claims them, a JSON file is
    read on, up to a bound (`_deep_detect`), so a large file no reader claims is rejected
    without being loaded whole. A trajectory with no step from a non-empty file carries a
    warning: the reader took a file it could not make sense of.

    The path is made absolute first (without following links), so what readers derive from
    it (a run folder in an id) and the outcome sidecars found beside it do not depend on the
    working directory.
    """
    path = Path(os.path.abspath(path))
    _refuse_special(path)  # opening a FIFO would wait forever for a writer
    try:
        handle, size = _opened(path)
        with handle:
            reader_cls, data = _contents(path, handle, size, format)
            return _read(path, data, reader_cls, format=format, lenient=lenient, strict=strict)
    except OSError as exc:
        raise TraceError(path, f"cannot read: {exc.strerror or exc}") from exc


def _opened(path: Path) -> Opened:
    """The file, opened as every input is (`bounded_read.open_regular`): one swapped for a FIFO
    after `_refuse_special` looked is still never waited for."""
    try:
        return open_regular(path)
    except NotRegularFile as exc:
        kind = _kind(exc.mode)
        raise NotAFileError(path, f"cannot read {kind}: only regular files are traces") from exc


def _contents(
    path: Path, handle: BinaryIO, size: int, format: str | None
) -> tuple[type[TraceReader], bytes]:
    """The reader for the file and its bytes, read up to `size`, the size it had when opened (a
    file that grows as it is read is read as it was), which the input cap is checked against
    before a byte is read: a path's `stat` may be of another file than the one opened. A file
    of size 0 is not read at all (`bounded_read.Opened`)."""
    check_file_size(path, size)
    head = handle.read(min(HEAD_BYTES, size))
    reader_cls = get_reader(format) if format else detect_in_file(path, head, handle)
    if len(head) < HEAD_BYTES:
        return reader_cls, head
    if getattr(reader_cls, "reads_lines", False) and size >= LINES_FROM:
        return reader_cls, cast(bytes, LargeFile(handle, size))
    handle.seek(0)  # re-read from the start: `head + rest` would copy it all
    return reader_cls, handle.read(size)


def _read(
    path: Path, data: bytes, reader_cls: type[TraceReader], *, format: str | None,
    lenient: bool, strict: bool,
) -> list[Trajectory]:  # fmt: skip
    read_from = data  # the `LargeFile`, if one: it knows whether the file shrank while read
    if data[:3] == UTF8_BOM:
        data = data[3:]  # a copy, even of a `LargeFile`: rare, and every reader then reads it
    # a detected format is read best-effort, with a warning; --format or --strict: conform or fail
    reader = reader_cls(lenient=lenient or not (format or strict))  # type: ignore[call-arg]
    try:
        with noting_cut_lines() as cuts:  # a session still being written: all but its last line
            trajectories = list(reader.read(path, data))
    except AgentLensError:
        raise
    except READER_BUGS as exc:
        raise TraceError(path, _reader_bug(exc), reader_cls.name) from exc
    runs = getattr(reader_cls, "lines_are_runs", False)
    mark_cut_lines(trajectories, cuts, lines_are_runs=runs)
    shrank = _note_shrunk(path, read_from, trajectories)
    if reader_cls.name != "agentlens-jsonl" and not (
        cuts or shrank
    ):  # a cut run may not have begun
        _note_empty(trajectories, reader_cls.name, len(data))
    try:
        return _checked(path, data, trajectories, reader_cls.name)
    except RecursionError as exc:  # a value nested within the decoder's limit, past the walks'
        reason = "a value is nested too deeply to check it for secrets and numbers"
        raise TraceError(path, reason, reader_cls.name) from exc


def _note_shrunk(path: Path, data: object, trajectories: list[Trajectory]) -> bool:
    """Whether the file was cut short while it was read (a `LargeFile` that read short, a log
    rotated by copytruncate): each trajectory read then says so, as it stops where the file
    did; with none read, that is the file's failure."""
    note = data.shrink_note() if isinstance(data, LargeFile) else None
    if note is None:
        return False
    if not trajectories:
        raise TraceError(path, f"{note}, and no run was read before its new end")
    for trajectory in trajectories:
        trajectory.add_warnings([note])
    return True


def _checked(
    path: Path, data: bytes, trajectories: list[Trajectory], name: str
) -> list[Trajectory]:
    negative = next(filter(None, map(first_negative, trajectories)), None)
    if negative is not None:
        raise TraceError(path, f"negative number at {negative}", name)
    if has_surrogates(str(path)):  # ids and names made from the file's name carry its bytes
        trajectories = [_printable(t) for t in trajectories]
    return _checked_and_redacted(path, data, trajectories)


def _checked_and_redacted(
    path: Path, data: bytes, trajectories: list[Trajectory]
) -> list[Trajectory]:
    """The numbers checked (`_check_numbers`), then the one redaction pass: before anything
    renders, cuts or stores a text (agentlens.redaction). A trajectory's JSON, which redaction
    scans anyway, spells every integer in full: with no run of 19 digits in it, none is out
    of range and nothing need be walked."""
    redacting = redaction.enabled()
    documents = [redaction.encoded(t) if redacting else None for t in trajectories]
    copied: frozenset[str] | None = None
    for trajectory, document in zip(trajectories, documents, strict=True):
        if document is None or has_long_digits(document):
            # Values copied verbatim from the file (`raw`, `arguments`) hold only the file's own
            # numbers: with no run of 19 digits in it, none is out of range, nor walked.
            if copied is None:
                copied = frozenset() if has_long_digits(data) else COPIED_FIELDS
            _check_numbers(path, trajectory, copied)
    if not redacting:
        return trajectories
    return [redaction.redact_trajectory(t, d) for t, d in zip(trajectories, documents, strict=True)]


LINES_FROM = 32 * 2**20
"""A JSONL file at least this large is read a line at a time, not whole, by a reader that only
walks its lines (`reads_lines`; `_json.LargeFile`)."""


class NotAFileError(TraceError):
    """A FIFO, a device, a socket, a link that leads to no file or a walked link to a folder:
    never a trace. Named, it is a failure; met by a walk or a glob, a skipped file, with this
    reason."""


def _refuse_special(path: Path) -> None:
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        if os.path.islink(path):  # to nothing, or a loop (`islink`: a name too long is no link)
            raise NotAFileError(path, f"cannot read: {exc.strerror or exc}") from exc
        return  # the open below says why, in the usual words
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        if path.is_symlink():  # met by a walk (`_walk`); one named is walked, never read
            raise NotAFileError(path, "a link to a folder, not followed: name it to read it")
        _refuse_unlisted(path)
        raise TraceError(path, "cannot read a folder: only regular files are traces")
    raise NotAFileError(path, f"cannot read {_kind(mode)}: only regular files are traces")


def _kind(mode: int) -> str:
    kinds = {stat.S_ISFIFO: "a FIFO", stat.S_ISCHR: "a character device",
             stat.S_ISBLK: "a block device", stat.S_ISSOCK: "a socket",
             stat.S_ISDIR: "a folder"}  # fmt: skip
    return next((name for test, name in kinds.items() if test(mode)), "not a regular file")


def _refuse_unlisted(folder: Path) -> None:
    """A folder the walk could not list (`_walk`): why, in the usual words."""
    try:
        os.scandir(folder).close()
    except OSError as exc:
        raise TraceError(folder, f"cannot read: {exc.strerror or exc}") from exc


INT64 = 2**63 - 1
_DIGITS_ONLY = bytes(ord("0") if chr(byte) in "0123456789" else ord(".") for byte in range(256))
_DIGIT_RUN = b"0" * 19
"""Every integer beyond INT64 has at least 19 digits."""
_CHUNK = 16 * 2**20


def has_long_digits(data: bytes) -> bool:
    """Whether `data` (bytes or a `LargeFile`) holds a run of 19 ASCII digits. Each chunk's digits
    become `0` and all else `.`, then a substring search: 13x faster than `re`'s `\\d{19}`."""
    overlap = len(_DIGIT_RUN) - 1  # a run that spans two chunks is whole in the second
    for start in range(0, max(len(data), 1), _CHUNK):
        chunk = data[max(start - overlap, 0) : start + _CHUNK]
        if _DIGIT_RUN in chunk.translate(_DIGITS_ONLY):
            return True
    return False


COPIED_FIELDS = frozenset({"raw", "arguments"})


def _check_numbers(path: Path, value: object, skip: frozenset[str] = frozenset()) -> None:
    """A number no store, JSON writer or database column can hold (a token count of 2**70) is
    this file's error, found now, not the batch's when something writes it. The trajectory is
    walked in place, not as `msgspec.to_builtins` (a second copy of it, as large as the file);
    leaves that cannot be numbers are passed over, and a value's path is spelled only if it
    is out of range."""
    stack: list[tuple[object, tuple[object, ...]]] = [(value, ())]
    while stack:
        value, where = stack.pop()
        if isinstance(value, msgspec.Struct):
            items: Iterable[tuple[object, object]] = (
                (name, getattr(value, name)) for name in value.__struct_fields__ if name not in skip
            )
        elif isinstance(value, dict):
            items = value.items()
        elif isinstance(value, list | tuple):
            items = enumerate(value)
        else:
            continue
        for key, item in items:
            if type(item) in LEAVES:
                continue
            if not isinstance(item, int):
                stack.append((item, (*where, key)))
            elif not -INT64 - 1 <= item <= INT64:
                at = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in (*where, key))
                raise TraceError(path, f"number out of range at {at.lstrip('.')}: {str(item)[:40]}")


LEAVES = frozenset({str, float, bool, type(None)})


class ReadProblems(Protocol):
    """Where a batch read notes the files that gave no trajectory (`ReadResult`, `TraceStream`,
    `pooled_read.ReadSummary`)."""

    failures: list[ReadFailure]
    skipped: list[str]
    unread: list[str]
    sidecars: list[str]


class ReadReport(ReadProblems, Protocol):
    """What a batch read tells its user: the problems, the readers' warnings (a count per
    line) and how many trajectories were read."""

    @property
    def warnings(self) -> Counter[str]: ...
    @property
    def n_read(self) -> int: ...


def read_one(
    problems: ReadProblems,
    path: Path,
    explicit: bool,
    inside: Path | None,
    *,
    format: str | None,
    lenient: bool,
    strict: bool,
) -> list[Trajectory]:
    """The trajectories of a file of the batch (a `TraceFile`); a file that gives none is noted
    in `problems`, by kind."""
    # a sidecar is a file: a link to nothing or a loop named like one (`latest`) is skipped for
    # what it is, by `read_path`; `os.path.isfile`, as `Path.is_file` raises on a file in a
    # folder that may not be searched, or a name too long: `read_path` then says why
    if not explicit and is_sidecar(path) and os.path.isfile(path) and telltale_of(path) is None:
        problems.sidecars.append(f"{printable(str(path))}: {SIDECAR_REASON}")
        return []
    if inside is not None:
        where = f"a sub-agent, read inside {printable(str(inside))}"
        problems.sidecars.append(f"{printable(str(path))}: {where}")
        return []
    try:
        read = read_path(path, format=format, lenient=lenient, strict=strict)
        return _naming_the_file_read(path, read)
    except TraceError as exc:
        if not explicit and isinstance(exc, NotAFileError):
            problems.skipped.append(f"{exc.path}: {exc.reason}")
        elif explicit or not isinstance(exc, UnknownFormatError):
            problems.failures.append(ReadFailure(exc.path, exc.format, exc.reason, exc))
        elif exc.telltale is None:
            problems.skipped.append(f"{exc.path}: {exc.reason}")
        elif strict:
            reason = f"{exc.reason} (it has {exc.telltale}; --strict)"
            problems.failures.append(ReadFailure(exc.path, None, reason, exc))
        else:
            problems.unread.append(
                f"{exc.path}: looks like a trace ({exc.telltale}) but {exc.reason}"
            )
    return []


def _naming_the_file_read(path: Path, trajectories: list[Trajectory]) -> list[Trajectory]:
    """Each trajectory whose source names another file (a canonical JSONL copy keeps its
    original's) with the file read as `source.read_from`, which a message about it names. Both
    masked: a source path masked for a key in its name differs from the file read, which would
    otherwise be named whole here."""
    read = redaction.masked(printable(os.path.abspath(path)))  # as `read_path` names its own
    for trajectory in trajectories:
        if trajectory.source.path != read:
            trajectory.source.read_from = read
    return trajectories


def _note_empty(trajectories: list[Trajectory], format: str, size: int) -> None:
    for trajectory in trajectories:
        if not trajectory.steps and not trajectory.subtrajectories:
            note = f"0 steps read from a {size}-byte file: is it really {format}?"
            trajectory.add_warnings([note])


def _printable(trajectory: Trajectory) -> Trajectory:
    return msgspec.convert(printable_all(msgspec.to_builtins(trajectory)), Trajectory)


# What a reader raises on a shape it did not expect. Readers should turn each into a SchemaError
# naming the field (tests/formats/test_fuzz_readers.py looks for them); until one does, the user
# still gets one line, which says where the reader failed so the report is useful.
READER_BUGS = (
    ValueError,
    KeyError,
    TypeError,
    AttributeError,
    IndexError,
    RecursionError,
    ArithmeticError,
)


def _reader_bug(exc: BaseException) -> str:
    try:
        detail = str(exc)
    except RecursionError:  # e.g. a KeyError whose key is a hostile 1000-deep list
        detail = "(message too deeply nested to show)"
    detail = detail if len(detail) <= 120 else detail[:117] + "..."
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    return (
        f"unexpected shape: {type(exc).__name__}: {detail}{where} "
        "(a reader bug: please report it; --debug shows the traceback)"
    )
