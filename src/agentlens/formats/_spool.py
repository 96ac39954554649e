"""Trajectories parked in a temporary file between the two passes of a streamed batch read.

A batch's ids are only final once every file is read (`_batch_ids`: a later copy of a session
renames an earlier one), so a stream cannot hand out a trajectory before the last file is read.
Rather than keep them all in memory, the first pass writes each one to an unnamed temporary file
(deleted when closed, or when the process ends) and keeps 16 bytes per trajectory: where it
starts and a hash of its id. Each is kept as `_spill_codec` writes it: what comes back is the
trajectory that was written, value for value (a NaN, a lone surrogate, a timestamp's offset), so
it encodes to the very bytes the original did (its digest, `--json`, `convert`).
"""

from __future__ import annotations

import tempfile
from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Sequence

from agentlens.formats._spill_codec import decode, encode
from agentlens.trajectory import Trajectory


class Spool:
    """The last file's trajectories are held in memory, not written, until the next file comes:
    a batch of one large file is never copied to disk (nor its encoding held beside it)."""

    def __init__(self) -> None:
        self._held: list[Trajectory] = []
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

    def _write(self, trajectory: Trajectory) -> None:
        data = encode(trajectory)
        self._starts.append(self._end)
        self._file.write(data)
        self._end += len(data)

    def get(self, position: int) -> Trajectory:
        """A copy of the trajectory at `position`, to look at or change freely."""
        if position >= len(self._starts):
            return decode(encode(self._held[position - len(self._starts)]))
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
        return same_id_groups(self._id_hashes, lambda position: self.get(position).id)

    def close(self) -> None:
        self._file.close()
        self._held = []

    def _stop(self, position: int) -> int:
        return self._starts[position + 1] if position + 1 < len(self._starts) else self._end


def same_id_groups(hashes: array[int], id_at: Callable[[int], str]) -> list[list[int]]:
    """Positions that share an id, one list per id, by first position, from the ids' hashes:
    only the few positions whose hashes repeat are asked for their id (`id_at`)."""
    if len(hashes) < SORTED_FROM:
        counts = Counter(hashes)
        candidates = [p for p, h in enumerate(hashes) if counts[h] > 1]
    else:
        candidates = _sorted_repeats(hashes)
    groups: dict[str, list[int]] = {}
    for position in candidates:  # equal hashes, maybe different ids: ask for the ids
        groups.setdefault(id_at(position), []).append(position)
    repeats = [group for group in groups.values() if len(group) > 1]
    return sorted(repeats, key=lambda group: group[0])


SORTED_FROM = 200_000
"""From this many ids on, repeats are found by sorting the hashes (numpy: 80 ms to import, a
tenth of the memory of counting them in a dict)."""


def _sorted_repeats(hashes: array[int]) -> list[int]:
    import numpy as np

    found = np.frombuffer(hashes, dtype=np.int64)
    order = np.argsort(found, kind="stable")
    ordered = found[order]
    repeated = np.flatnonzero(ordered[1:] == ordered[:-1])
    return sorted({int(p) for i in repeated for p in (order[i], order[i + 1])})


def read_spans(path: str, spans: Sequence[tuple[int, int]]) -> list[bytes]:
    """The encoded trajectories at `spans` of a spill file (`run_spill`), from any process."""
    with open(path, "rb") as handle:
        found = []
        for start, stop in spans:
            handle.seek(start)
            found.append(handle.read(stop - start))
        return found
