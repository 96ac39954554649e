"""Read a batch of trace files as a stream: one trajectory in memory at a time, whatever the size
of the batch.

The batch is read in two passes. The first reads every file (detection, reader, redaction, the
checks of `read_path`) and parks each trajectory in a temporary file (`_spool`), keeping only its
place and a hash of its id; the ids are then made unique across the batch (`_batch_ids`), which
needs every id. The second pass hands the trajectories out in file order, each renamed as the
batch decided and labelled from its outcome sidecars and `--labels` tables as it goes. What is
handed out is what `read_paths` returns as a list (it is this stream, collected).

    stream = stream_paths(["runs/"])
    for trajectory in stream:      # once; stream.count is known before the first
        ...
    stream.failures, stream.warnings  # complete once the stream is exhausted
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias, get_args

from agentlens.errors import ConfigError
from agentlens.formats._batch_ids import _rename, _run_folder_first, _tell_apart, file_read
from agentlens.formats._spool import Spool
from agentlens.formats.load import (
    ReadFailure,
    ReadResult,
    read_one,
    trace_files,
    unmatched_patterns,
    warning_lines,
)
from agentlens.trajectory import Trajectory

if TYPE_CHECKING:
    from agentlens.outcomes import LabelTable, SidecarLabeler, Unevaluated


class TraceStream:
    """The trajectories of a batch, iterable once, and what the batch could not read.

    `count` (how many will be handed out), `failures`, `skipped`, `unread` and `sidecars` are
    known from the start; `warnings` (readers' and sidecars' notes, per line how many
    trajectories carry it) and `n_read` grow as the stream is read."""

    def __init__(
        self, spool: Spool, labeler: SidecarLabeler | None, tables: Sequence[LabelTable]
    ) -> None:
        self.failures: list[ReadFailure] = []
        self.skipped: list[str] = []
        self.unread: list[str] = []
        self.sidecars: list[str] = []
        self.warnings: Counter[str] = Counter()
        self.n_read = 0
        self._spool = spool
        self._labeler = labeler
        self._tables = tables
        self._renames: dict[int, str] = {}
        self._drops: set[int] = set()
        self._started = False

    @property
    def count(self) -> int:
        return len(self._spool) - len(self._drops)

    def __iter__(self) -> Iterator[Trajectory]:
        from agentlens.outcomes import apply_tables

        if self._started:
            raise RuntimeError("a TraceStream is read once")
        self._started = True
        try:
            for position, trajectory in enumerate(self._spool):
                if position in self._drops:
                    continue
                if position in self._renames:
                    _rename(trajectory, self._renames[position])
                if self._labeler is not None:
                    self._labeler.label(trajectory)
                apply_tables([trajectory], self._tables)
                self.warnings.update(warning_lines(trajectory))
                self.n_read += 1
                yield trajectory
        finally:
            self._spool.close()

    def collect(self) -> ReadResult:
        """The whole stream in one list, with what the batch could not read."""
        trajectories = list(self)
        return ReadResult(trajectories, self.failures, self.skipped, self.unread, self.sidecars)

    def settle_ids(self) -> None:
        """Decide the renames and drops that make ids unique (`settle_ids`)."""
        self._renames, self._drops = settle_ids(self._spool.same_ids(), self._spool.get,
                                                self.failures)  # fmt: skip


def settle_ids(
    groups: list[list[int]], get: Callable[[int], Trajectory], failures: list[ReadFailure]
) -> tuple[dict[int, str], set[int]]:
    """The renames (position -> new id) and the drops that make a batch's ids unique
    (`_batch_ids`), from the `groups` of positions that share an id; `get` gives the trajectory
    at a position. Each repeat dropped is added to `failures`."""
    renames: dict[int, str] = {}
    drops: set[int] = set()
    for positions in groups:
        group = [_stub(get(p)) for p in positions]
        before = [t.id for t in group]
        repeats = _tell_apart(before[0], group)
        for position, trajectory, old in zip(positions, group, before, strict=True):
            if trajectory.id != old:
                renames[position] = trajectory.id
        for repeat, why in repeats:
            # as `list.remove` did: the first equal one goes (a file named twice: the earlier)
            first = next(
                p for p, t in zip(positions, group, strict=True)
                if p not in drops and t == repeat
            )  # fmt: skip
            drops.add(first)
            failures.append(ReadFailure(*file_read(repeat), why, None))
    return renames, drops


def _stub(trajectory: Trajectory) -> Trajectory:
    """What telling a run apart from runs of the same id needs, its id and source: a group's
    runs were held whole, and 100 copies of one 3 MB session took 180 MiB more."""
    return Trajectory(id=trajectory.id, source=trajectory.source)


PathSpecs: TypeAlias = str | Path | Iterable[str | Path]
"""What the batch readers take: one path, folder or glob, or many."""


def stream_paths(
    specs: PathSpecs,
    *,
    format: str | None = None,
    lenient: bool = False,
    labels: str | Sequence[str] = (),
    sidecars: bool = True,
    on_file: Callable[[Path], None] | None = None,
    strict: bool = False,
    unevaluated: Unevaluated = "unknown",
) -> TraceStream:
    """Read many files (paths, directories, globs); failures are collected, never raised.

    A walked file that looks like a trace (JSON with message/step/event keys) but that no
    reader takes goes to `unread`, or to `failures` when `strict`.

    Outcome labels are then taken from sidecars found beside each trace (`sidecars=True`) and from
    the explicit `labels` files, in the precedence documented in `agentlens.outcomes`.
    `on_file` is called after each file (the CLI's progress bar). Every file is read before
    this returns; the trajectories come out of the stream.
    """
    from agentlens.outcomes import SidecarLabeler, load_label_spec
    from agentlens.outcomes import Unevaluated as unevaluated_choices

    if unevaluated not in get_args(unevaluated_choices):
        choices = " or ".join(map(repr, get_args(unevaluated_choices)))
        raise ConfigError(f"unevaluated={unevaluated!r}: choose {choices}")
    label_specs = [labels] if isinstance(labels, str) else labels
    tables = [load_label_spec(spec, unevaluated) for spec in label_specs]  # bad ones fail first
    labeler = SidecarLabeler(unevaluated) if sidecars else None
    stream = TraceStream(Spool(), labeler, tables)
    specs = spec_list(specs)
    stream.failures += unmatched_patterns(specs)
    repeats: list[ReadFailure] = []
    at = len(stream.failures)  # named before the failures of reading, as a pooled read does
    for path, explicit, inside in trace_files(specs, repeats):
        trajectories = read_one(
            stream, path, explicit, inside, format=format, lenient=lenient, strict=strict
        )
        for trajectory in trajectories:
            _run_folder_first(trajectory)
        if trajectories:
            stream._spool.add_file(trajectories)
        if on_file is not None:
            on_file(path)
    stream.failures[at:at] = repeats
    stream.settle_ids()
    return stream


def spec_list(specs: PathSpecs) -> list[str | Path]:
    """A path given alone is one spec: a string is iterable too, and its characters read as
    paths would walk `/` for `"/runs"`."""
    if isinstance(specs, str | Path):
        return [specs]
    return list(specs)


def iter_trajectories(
    specs: PathSpecs,
    *,
    format: str | None = None,
    lenient: bool = False,
    labels: str | Sequence[str] = (),
    sidecars: bool = True,
    on_file: Callable[[Path], None] | None = None,
    strict: bool = False,
    unevaluated: Unevaluated = "unknown",
) -> Iterator[Trajectory]:
    """The trajectories of `stream_paths` with the same options, its failures left aside (named
    one by one: a type checker then catches a misspelt option)."""
    yield from stream_paths(
        specs, format=format, lenient=lenient, labels=labels, sidecars=sidecars,
        on_file=on_file, strict=strict, unevaluated=unevaluated,
    )  # fmt: skip


def read_paths(
    specs: PathSpecs,
    *,
    format: str | None = None,
    lenient: bool = False,
    labels: str | Sequence[str] = (),
    sidecars: bool = True,
    on_file: Callable[[Path], None] | None = None,
    strict: bool = False,
    unevaluated: Unevaluated = "unknown",
) -> ReadResult:
    """Read many files (paths, directories, globs) into one list; failures are collected, never
    raised. The stream of `stream_paths` (which says what is read and
    how outcomes are labelled), held in memory whole: for batches that need every trajectory at
    once."""
    stream = stream_paths(
        specs, format=format, lenient=lenient, labels=labels, sidecars=sidecars,
        on_file=on_file, strict=strict, unevaluated=unevaluated,
    )  # fmt: skip
    return stream.collect()
