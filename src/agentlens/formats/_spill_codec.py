"""A trajectory as it waits in a spill file (`_spool` for `read_paths`, `run_spill` for a
cohort's workers) and as it comes back: the run that was written, value for value.

Most runs are msgpack (tag `m`): it carries every float, NaN and Infinity included, which JSON
writes as `null`, it encodes in half JSON's time and decodes in at most JSON's
(docs/benchmarks.md, "Spill codec"). What msgpack does not carry goes as the run's
builtins (`msgspec.to_builtins`, the JSON data model without the JSON text), pickled (tag `p`):
a lone surrogate, which no UTF-8 writer takes (Python's `json` reads a `\\ud800` escape into
one), a step timestamp whose UTC offset is not 0 (msgpack brings it back in UTC; as builtins it
is ISO text with its offset) and an int beyond 64 bits (which reading a file refuses). Not the run itself pickled: a default msgspec omits
by identity (`schema_version`) would come back an equal, new string, then be written out.
"""

from __future__ import annotations

import pickle

import msgspec

from agentlens.trajectory import Trajectory
from agentlens.trajectory_msgpack import tagged, untagged


def encode(trajectory: Trajectory) -> bytes:
    """The run's bytes in a spill file, a tag byte first (`decode`); the msgpack is the engines'
    too (`trajectory_msgpack`), the fallback the run's builtins."""
    return tagged(trajectory, _offsets_kept(trajectory), _builtins_pickled)


def decode(data: bytes) -> Trajectory:
    """The run `encode` wrote."""
    return untagged(data, _from_builtins)


def _builtins_pickled(trajectory: Trajectory) -> bytes:
    return pickle.dumps(msgspec.to_builtins(trajectory), protocol=pickle.HIGHEST_PROTOCOL)


def _from_builtins(body: memoryview) -> Trajectory:
    return msgspec.convert(pickle.loads(body), Trajectory)


def _offsets_kept(trajectory: Trajectory) -> bool:
    """Whether msgpack brings back every step timestamp as it is: naive, or at UTC."""
    for step in trajectory.steps:
        when = step.timestamp
        if when is not None and when.tzinfo is not None and when.utcoffset():
            return False
    return all(_offsets_kept(sub) for sub in trajectory.subtrajectories)
