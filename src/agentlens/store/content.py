"""Content addressing: a step's key is the hash of its parent's key and its own JSON, so two
trajectories that start alike (a system prompt, a task message, a resumed run) share those rows.
A trajectory's digest hashes everything but its steps together with its last step's key.

Bodies are zlib-compressed (level 1: SQLite does not compress, and observations are mostly text).
"""

from __future__ import annotations

import hashlib
import zlib
from typing import NamedTuple

import msgspec

from agentlens.trajectory import Step, Trajectory

_encode = msgspec.json.Encoder().encode
_step_decoder = msgspec.json.Decoder(Step)
_meta_decoder = msgspec.json.Decoder(Trajectory)


class StepRow(NamedTuple):
    hash: str
    parent: str | None
    position: int
    body: bytes


class Stored(NamedTuple):
    """A trajectory cut into the rows the store keeps."""

    digest: str
    head: str | None
    steps: list[StepRow]
    meta: bytes


def split(trajectory: Trajectory) -> Stored:
    rows: list[StepRow] = []
    parent: str | None = None
    for position, step in enumerate(trajectory.steps):
        body = _encode(step)
        key = hashlib.sha256((parent or "").encode() + b"\0" + body).hexdigest()
        rows.append(StepRow(key, parent, position, zlib.compress(body, 1)))
        parent = key
    meta = _encode(msgspec.structs.replace(trajectory, steps=[]))
    digest = hashlib.sha256(meta + b"\0" + (parent or "").encode()).hexdigest()
    return Stored(digest, parent, rows, zlib.compress(meta, 1))


def digest(trajectory: Trajectory) -> str:
    return split(trajectory).digest


def join(meta: bytes, steps: list[bytes]) -> Trajectory:
    """The trajectory back from its meta body and its step bodies in order."""
    trajectory = _meta_decoder.decode(zlib.decompress(meta))
    trajectory.steps = [_step_decoder.decode(zlib.decompress(body)) for body in steps]
    return trajectory
