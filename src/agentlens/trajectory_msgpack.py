"""A trajectory as msgpack with a tag byte, and a fallback for what msgpack cannot carry: the
one format both a cohort's spill files (`formats/_spill_codec.py`) and the engines' transport
(`engine/_codec.py`) write, each with its own test of exactness and its own fallback. Here, below
both, so that reading a file never imports an engine."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from agentlens.trajectory import Trajectory

_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(Trajectory)
MSGPACK, PICKLE = b"m", b"p"


def encode(traj: Trajectory) -> bytes:
    return _encoder.encode(traj)


def decode(data: bytes | memoryview) -> Trajectory:
    return _decoder.decode(data)


def tagged(traj: Trajectory, as_msgpack: bool, fallback: Callable[[Trajectory], bytes]) -> bytes:
    """`MSGPACK` and the msgpack bytes when `as_msgpack` and msgpack takes every value, else
    `PICKLE` and what `fallback` makes."""
    if as_msgpack:
        try:
            return MSGPACK + encode(traj)
        except (UnicodeEncodeError, OverflowError):  # a lone surrogate; an int beyond 64 bits
            pass
    return PICKLE + fallback(traj)


def untagged(data: bytes, fallback: Callable[[memoryview], Trajectory]) -> Trajectory:
    """The run `tagged` wrote, with the `fallback` reader of its pickle tag."""
    body = memoryview(data)[1:]
    return decode(body) if data[:1] == MSGPACK else fallback(body)
