"""Content addressing: a step's key is the hash of its parent's key and its own JSON, so two
trajectories that start alike (a system prompt, a task message, a resumed run) share those rows.
A trajectory's digest hashes everything but its steps together with its last step's key.

Bodies are zstd-compressed (level 1: a quarter of the JSON's size on real traces, at about
300 MB/s, three times zlib's speed at the same ratio; SQLite does not compress by itself).
Compressor objects are not thread-safe, so each call makes its own (a few microseconds).
"""

from __future__ import annotations

import hashlib
from typing import NamedTuple

import msgspec
import zstandard

from agentlens.os_names import scrubbed
from agentlens.trajectory import Step, Trajectory

_encode = msgspec.json.Encoder().encode
_step_decoder = msgspec.json.Decoder(Step)
_meta_decoder = msgspec.json.Decoder(Trajectory)


CORRUPT = (zstandard.ZstdError, msgspec.DecodeError)
"""What reading a damaged body raises (a `msgspec.ValidationError` is a `DecodeError`)."""


class StepRow(NamedTuple):
    hash: str
    parent: str | None
    position: int
    body: bytes


class Stored(NamedTuple):
    """A trajectory cut into the rows the store keeps; bodies are not compressed yet (`packed`
    does that), so that a trajectory already in the store costs only its hashing."""

    digest: str
    head: str | None
    steps: list[StepRow]
    meta: bytes


def _encode_text(value: msgspec.Struct) -> bytes:
    """The canonical JSON of a step or trajectory; lone surrogates in its text are kept as
    U+FFFD (so that a trace read from a file whose name is not UTF-8 can be stored)."""
    try:
        return _encode(value)
    except UnicodeEncodeError:
        return _encode(scrubbed(msgspec.to_builtins(value)))


def split(trajectory: Trajectory) -> Stored:
    rows: list[StepRow] = []
    parent: str | None = None
    for position, step in enumerate(trajectory.steps):
        body = _encode_text(step)
        key = hashlib.sha256((parent or "").encode() + b"\0" + body).hexdigest()
        rows.append(StepRow(key, parent, position, body))
        parent = key
    meta = _encode_text(msgspec.structs.replace(trajectory, steps=[]))
    digest = hashlib.sha256(meta + b"\0" + (parent or "").encode()).hexdigest()
    return Stored(digest, parent, rows, meta)


def packed(stored: Stored) -> Stored:
    compress = zstandard.ZstdCompressor(level=1).compress
    steps = [row._replace(body=compress(row.body)) for row in stored.steps]
    return stored._replace(steps=steps, meta=compress(stored.meta))


def pack(document: bytes) -> bytes:
    return zstandard.ZstdCompressor(level=1).compress(document)


def unpack(body: bytes) -> bytes:
    return zstandard.ZstdDecompressor().decompress(body)


def digest(trajectory: Trajectory) -> str:
    return split(trajectory).digest


def join(meta: bytes, steps: list[bytes]) -> Trajectory:
    """The trajectory back from its meta body and its step bodies in order."""
    decompress = zstandard.ZstdDecompressor().decompress
    trajectory = _meta_decoder.decode(decompress(meta))
    trajectory.steps = [_step_decoder.decode(decompress(body)) for body in steps]
    return trajectory
