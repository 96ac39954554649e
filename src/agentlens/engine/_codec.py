"""Trajectories cross process boundaries as msgpack: an exact round trip of the msgspec model,
about 4x cheaper than pickling its Structs on both sides (399 dev traces: 0.2 s vs 0.8 s)."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from agentlens.trajectory import Trajectory

_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(Trajectory)


def encode(traj: Trajectory) -> bytes:
    return _encoder.encode(traj)


def decode(data: bytes) -> Trajectory:
    return _decoder.decode(data)


def reduce_trajectory(traj: Trajectory) -> tuple[Callable[[bytes], Trajectory], tuple[bytes]]:
    """A `pickle` reducer: rebuilt by `decode` in the receiving process."""
    return decode, (encode(traj),)
