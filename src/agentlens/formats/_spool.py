"""Trajectories parked in a temporary file between the two passes of a streamed batch read.

A batch's ids are only final once every file is read (`_batch_ids`: a later copy of a session
renames an earlier one), so a stream cannot hand out a trajectory before the last file is read.
Rather than keep them all in memory, the first pass writes each one to an unnamed temporary file
(deleted when closed, or when the process ends) and keeps 16 bytes per trajectory: where it
starts and a hash of its id. Each is kept as its canonical JSON (msgspec): what comes back
encodes to the very bytes the original did (its digest, `--json`, `convert`), which pickle does
not promise (a default it omits by identity comes back an equal, new string: then written out),
nor msgpack (a timestamp comes back in UTC, its offset lost).
"""

from __future__ import annotations

import os
import tempfile
from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path

import msgspec

from agentlens.trajectory import Trajectory


class Spool:
    """The last file's trajectories are held in memory, not written, until the next file comes:
    a batch of one large file is never copied to disk (nor its encoding held beside it).

    `named`: the file has a `path` that other processes can open (a cohort's workers read their
    task's runs with `read_spans`); it is removed on `close`. `append` writes at once."""

    def __init__(self, *, named: bool = False) -> None:
        self._held: list[Trajectory] = []
        self.path: str | None = None
        if named:
            handle, self.path = tempfile.mkstemp(prefix="agentlens-spool-", suffix=".json")
            self._file = os.fdopen(handle, "w+b")
        else:
            self._file = tempfile.TemporaryFile(prefix="agentlens-spool-")  # noqa: SIM115 -- open until close()
        self._starts = array("Q")
        self._id_hashes = array("q")
        self._end = 0

    def __len__(self) -> int:
        return len(self._starts) + len(self._held)

    def add_file(self, trajectories: list[Trajectory]) -> None:
        """One file's trajectories, in order."""
        for trajectory in self._held:
            self._write(trajectory)
        self._held = trajectories
        self._id_hashes.extend(hash(t.id) for t in trajectories)

    def append(self, trajectory: Trajectory) -> int:
        """Written at once (nothing held); its position, which `span` finds it by."""
        for held in self._held:
            self._write(held)
        self._held = []
        self._id_hashes.append(hash(trajectory.id))
        self._write(trajectory)
        return len(self._starts) - 1

    def span(self, position: int) -> tuple[int, int]:
        """Where the written trajectory at `position` starts and stops in the file."""
        return self._starts[position], self._stop(position)

    def flush(self) -> None:
        self._file.flush()

    def _write(self, trajectory: Trajectory) -> None:
        data = _ENCODER.encode(trajectory)
        self._starts.append(self._end)
        self._file.write(data)
        self._end += len(data)

    def get(self, position: int) -> Trajectory:
        """A copy of the trajectory at `position`, to look at or change freely."""
        if position >= len(self._starts):
            return decode(_ENCODER.encode(self._held[position - len(self._starts)]))
        self._file.flush()
        start = self._starts[position]
        self._file.seek(start)
        return decode(self._file.read(self._stop(position) - start))

    def __iter__(self) -> Iterator[Trajectory]:
        """Every trajectory in the order added, one in memory at a time."""
        self._file.flush()
        self._file.seek(0)
        for position, start in enumerate(self._starts):
            yield decode(self._file.read(self._stop(position) - start))
        yield from self._held

    def same_ids(self) -> list[list[int]]:
        """Positions of the trajectories that share an id, one list per id, by first position."""
        import numpy as np  # a sort of millions of hashes; numpy costs 40 ms to import at start-up

        hashes = np.frombuffer(self._id_hashes, dtype=np.int64) if len(self) else np.zeros(0)
        order = np.argsort(hashes, kind="stable")
        ordered = hashes[order]
        repeated = np.flatnonzero(ordered[1:] == ordered[:-1])
        candidates = sorted({int(p) for i in repeated for p in (order[i], order[i + 1])})
        groups: dict[str, list[int]] = {}
        for position in candidates:  # equal hashes, maybe different ids: ask the trajectories
            groups.setdefault(self.get(position).id, []).append(position)
        found = [group for group in groups.values() if len(group) > 1]
        return sorted(found, key=lambda group: group[0])

    def close(self) -> None:
        self._file.close()
        self._held = []
        if self.path is not None:
            Path(self.path).unlink(missing_ok=True)

    def _stop(self, position: int) -> int:
        return self._starts[position + 1] if position + 1 < len(self._starts) else self._end


_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(Trajectory)


def read_spans(path: str, spans: Sequence[tuple[int, int]]) -> list[bytes]:
    """The encoded trajectories at `spans` of a named spool's file, from any process."""
    with open(path, "rb") as handle:
        found = []
        for start, stop in spans:
            handle.seek(start)
            found.append(handle.read(stop - start))
        return found


def decode(data: bytes) -> Trajectory:
    """A trajectory from `read_spans`."""
    return _DECODER.decode(data)
