"""Turn user paths (files, directories, globs) into trajectories; a bad file never stops a batch."""

from __future__ import annotations

import glob
import os
import stat
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from agentlens.errors import AgentLensError, TraceError, UnknownFormatError
from agentlens.formats.registry import HEAD_BYTES, detect, get_reader
from agentlens.os_names import has_surrogates, printable, printable_all
from agentlens.redaction import maybe_redact
from agentlens.trajectory import Trajectory

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
SIDECAR_SUFFIXES = {".md", ".csv", ".tsv", ".log", ".txt", ".yaml", ".yml", ".py", ".cast", ""}


@dataclass(frozen=True)
class ReadFailure:
    path: str
    format: str | None
    reason: str
    error: BaseException | None


@dataclass
class ReadResult:
    trajectories: list[Trajectory] = field(default_factory=list)
    failures: list[ReadFailure] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def warnings(self) -> Counter[str]:
        """Problems that cost part of a trajectory but not the file (a broken sub-agent file, a
        skipped line), as readers note them in `metadata["warnings"]`: each line names the file,
        with how many trajectories carry it."""
        found: Counter[str] = Counter()
        for traj in self.trajectories:
            notes = traj.metadata.get("warnings")
            if isinstance(notes, list):
                path = traj.source.path
                found.update(n if path in n else f"{path}: {n}" for n in map(str, notes))
        return found


def is_sidecar(path: Path) -> bool:
    name = path.name.lower()
    return name in SIDECAR_NAMES or path.suffix.lower() in SIDECAR_SUFFIXES or name.startswith(".")


def is_pattern(text: str) -> bool:
    """A glob to expand; a name that exists is taken as written, even with glob characters
    (`run[1].json`)."""
    return glob.has_magic(text) and not os.path.lexists(text)


def iter_trace_paths(specs: Iterable[str | Path]) -> Iterator[tuple[Path, bool]]:
    """Yield (path, explicit) for every file named, globbed or found under a directory.

    `explicit` is False for files found by walking, whose sidecars are skipped rather than failed.
    """
    for spec in specs:
        text = str(spec)
        pattern = is_pattern(text)
        matches = sorted(glob.glob(text, recursive=True)) if pattern else [text]
        for match in matches:
            path = Path(match)
            if path.is_dir():
                yield from ((p, False) for p in _walk(path))
            else:
                yield path, not pattern


def _walk(root: Path) -> Iterator[Path]:
    """Regular files below `root`: a named pipe found by walking would block `open` until
    something writes to it, and a device may never end. (A file named explicitly is read as
    given, as `cat` would: `/dev/stdin` works.)"""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if not is_sidecar(path) and os.path.isfile(path):
                yield path


def read_path(
    path: str | Path, *, format: str | None = None, lenient: bool = False
) -> list[Trajectory]:
    """Read every trajectory in one file. Raises a `TraceError` naming the file and the reason.

    Only the first 64 KiB are read to detect the format, so a large file that no reader claims is
    rejected without being loaded.
    """
    path = Path(path)
    _refuse_special(path)  # opening a FIFO would wait forever for a writer
    try:
        with path.open("rb") as handle:
            head = handle.read(HEAD_BYTES)
            reader_cls = get_reader(format) if format else detect(path, head)
            if len(head) == HEAD_BYTES:  # re-read from the start: `head + rest` would copy it all
                handle.seek(0)
                data = handle.read()
            else:
                data = head
    except OSError as exc:
        raise TraceError(path, f"cannot read: {exc.strerror or exc}") from exc
    reader = reader_cls(lenient=lenient)  # type: ignore[call-arg]
    try:
        trajectories = list(reader.read(path, data))
    except AgentLensError:
        raise
    except READER_BUGS as exc:
        raise TraceError(path, _reader_bug(exc), reader_cls.name) from exc
    if has_surrogates(str(path)):  # ids and names made from the file's name carry its bytes
        trajectories = [_printable(t) for t in trajectories]
    for trajectory in trajectories:
        _check_numbers(path, msgspec.to_builtins(trajectory))
    # the one redaction pass: before anything renders, cuts or stores a text (agentlens.redaction)
    return [maybe_redact(t) for t in trajectories]


def _refuse_special(path: Path) -> None:
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # the open below says why, in the usual words
    if not stat.S_ISREG(mode):
        kinds = {stat.S_ISFIFO: "a FIFO", stat.S_ISCHR: "a character device",
                 stat.S_ISBLK: "a block device", stat.S_ISSOCK: "a socket", stat.S_ISDIR: "a folder"}  # fmt: skip
        kind = next((name for test, name in kinds.items() if test(mode)), "not a regular file")
        raise TraceError(path, f"cannot read {kind}: only regular files are traces")


INT64 = 2**63 - 1


def _check_numbers(path: Path, value: object, where: str = "") -> None:
    """A number no store, JSON writer or database column can hold (a token count of 2**70) is
    this file's error, found now, not the batch's when something writes it."""
    if isinstance(value, int) and not -INT64 - 1 <= value <= INT64:
        raise TraceError(path, f"number out of range at {where or 'top'}: {str(value)[:40]}")
    if isinstance(value, dict):
        for key, item in value.items():
            _check_numbers(path, item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_numbers(path, item, f"{where}[{index}]")


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


def read_paths(
    specs: Iterable[str | Path],
    *,
    format: str | None = None,
    lenient: bool = False,
    labels: Sequence[str] = (),
    sidecars: bool = True,
    on_file: Callable[[Path], None] | None = None,
) -> ReadResult:
    """Read many files (paths, directories, globs); failures are collected, never raised.

    Outcome labels are then taken from sidecars found beside each trace (`sidecars=True`) and from
    the explicit `labels` files, in the precedence documented in `agentlens.outcomes`.
    `on_file` is called after each file (the CLI's progress bar).
    """
    from agentlens.outcomes import apply_tables, discover_labels, load_label_spec

    tables = [load_label_spec(spec) for spec in labels]  # a bad --labels fails before reading
    result = ReadResult()
    specs = list(specs)
    for spec in specs:
        text = str(spec)
        if is_pattern(text) and not glob.glob(text, recursive=True):
            failure = ReadFailure(printable(text), None, "no file matches this pattern", None)
            result.failures.append(failure)
    for path, explicit in iter_trace_paths(specs):
        try:
            result.trajectories.extend(read_path(path, format=format, lenient=lenient))
        except TraceError as exc:
            if not explicit and isinstance(exc, UnknownFormatError):
                result.skipped.append(f"{exc.path}: {exc.reason}")
            else:
                result.failures.append(ReadFailure(exc.path, exc.format, exc.reason, exc))
        if on_file is not None:
            on_file(path)
    if sidecars:
        discover_labels(result.trajectories)
    apply_tables(result.trajectories, tables)
    return result
