"""The canonical model on disk: one `Trajectory` per JSONL line, encoded and validated by msgspec.

Every line starts with `{"schema_version":"agentlens.trajectory/1"`, which is how the reader
recognises its own files. A run keeps the source it was first read from (`source.path`, its
original); a batch names the file it read it from (`load.read_one`, `source.read_from`). A step's
`cwd` that is no working folder (`working_folder`: relative, a NUL, too long) is dropped, as every
other reader drops it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, ClassVar

import msgspec

from agentlens.errors import SchemaError, TraceError
from agentlens.formats._json import blank
from agentlens.formats._reader_base import SuffixReader
from agentlens.formats._unfinished import cut_line
from agentlens.shell.working_dir import working_folder
from agentlens.trajectory import SCHEMA_VERSION, Trajectory

MARKER = b'"schema_version":"' + SCHEMA_VERSION.encode() + b'"'
_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Trajectory)


def dump_jsonl(trajectories: Iterable[Trajectory], out: str | Path | IO[bytes]) -> int:
    """Write trajectories one per line to a path or a binary file; returns how many were written."""
    if isinstance(out, str | Path):
        with open(out, "wb") as handle:
            return dump_jsonl(trajectories, handle)
    count = 0
    for trajectory in trajectories:
        body = _encoder.encode(trajectory)
        # omit_defaults drops schema_version when it *is* the default object, not merely an
        # equal string (one read back from a database): write it first exactly once
        if not body.startswith(b"{" + MARKER):
            body = b"{" + MARKER + b"," + body[1:]
        out.write(body + b"\n")
        count += 1
    return count


def load_jsonl(path: str | Path) -> list[Trajectory]:
    """Read every trajectory of a canonical JSONL file, validating each line against the model."""
    path = Path(path)
    return list(JsonlReader().read(path, path.read_bytes()))


class JsonlReader(SuffixReader):
    name: ClassVar[str] = "agentlens-jsonl"
    lines_are_runs: ClassVar[bool] = True
    suffixes: ClassVar[tuple[str, ...]] = (".jsonl",)

    @classmethod
    def handles_bytes(cls, head: bytes) -> bool:
        return head.lstrip()[: len(MARKER) + 1].endswith(MARKER)

    def read(self, path: Path, data: bytes) -> Iterator[Trajectory]:
        if blank(data):
            raise TraceError(path, "empty file", self.name)
        numbered = enumerate(data.splitlines(), start=1)
        read_before = False
        for number, line in numbered:
            if not line or line.isspace():
                continue
            try:
                trajectory = _decoder.decode(line)
            except msgspec.ValidationError as exc:
                raise SchemaError(path, f"line {number}: {exc}", self.name) from exc
            except RecursionError:
                raise SchemaError(path, f"line {number}: nested too deeply", self.name) from None
            except msgspec.DecodeError as exc:
                hint = cut_line(path, number, line, rest=numbered, read_before=read_before)
                if hint is None:
                    return
                message = f"invalid JSON on line {number}: {exc}{hint}"
                raise TraceError(path, message, self.name) from exc
            read_before = True
            _drop_bad_folders(trajectory)
            trajectory.source.read_from = None  # the batch that read the copy, not this one
            yield trajectory


def _drop_bad_folders(trajectory: Trajectory) -> None:
    for step in trajectory.steps:
        if step.cwd is not None:
            step.cwd = working_folder(step.cwd)
    for sub in trajectory.subtrajectories:
        _drop_bad_folders(sub)
