"""Trajectories reach the workers exactly as sent: msgpack where it is exact, pickle otherwise."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import msgspec
import pytest

from agentlens.engine import _codec
from agentlens.seams import Engine
from agentlens.trajectory import Trajectory
from tests.engine.units import received, shape

IST = timezone(timedelta(hours=5, minutes=30))


def sent(traj: Trajectory) -> Trajectory:
    rebuild, args = _codec.reduce_trajectory(traj)
    return rebuild(*args)


def test_real_traces_travel_as_msgpack_exactly(runs: list[Trajectory]) -> None:
    assert all(_codec.pack(t)[:1] == _codec.MSGPACK for t in runs)
    assert [shape(sent(t)) for t in runs[:20]] == [shape(t) for t in runs[:20]]


def odd(traj: Trajectory, case: str) -> Trajectory:
    """`traj` with one value that msgpack alone would change or refuse."""
    step = traj.steps[0]
    if case == "utc offset":
        step = msgspec.structs.replace(step, timestamp=datetime(2025, 3, 1, 9, 30, tzinfo=IST))
    elif case == "big int in raw":
        step = msgspec.structs.replace(step, raw={"id": 2**70})
    elif case == "tuple in raw":
        step = msgspec.structs.replace(step, raw={"span": (3, 9)})
    elif case == "int cost":
        step = msgspec.structs.replace(step, cost=0)
    elif case == "naive datetime in metadata":
        return msgspec.structs.replace(traj, metadata={"started": datetime(2025, 3, 1, 9, 30)})
    elif case == "int key in metadata":
        return msgspec.structs.replace(traj, metadata={7: "seven"})
    elif case == "odd sub-trajectory":
        sub = odd(traj, "big int in raw")
        return msgspec.structs.replace(
            traj, subtrajectories=[msgspec.structs.replace(sub, id="sub")]
        )
    return msgspec.structs.replace(traj, steps=[step, *traj.steps[1:]])


CASES = [
    "utc offset",
    "big int in raw",
    "tuple in raw",
    "int cost",
    "naive datetime in metadata",
    "int key in metadata",
    "odd sub-trajectory",
]


@pytest.mark.parametrize("case", CASES)
def test_what_msgpack_cannot_carry_is_pickled(runs: list[Trajectory], case: str) -> None:
    traj = odd(runs[0], case)
    assert _codec.pack(traj)[:1] == _codec.PICKLE
    assert shape(sent(traj)) == shape(traj)


def test_nan_travels_as_msgpack(runs: list[Trajectory]) -> None:
    step = msgspec.structs.replace(runs[0].steps[0], cost=float("nan"), raw={"x": float("nan")})
    traj = msgspec.structs.replace(runs[0], steps=[step], metadata={"m": float("nan")})
    assert _codec.pack(traj)[:1] == _codec.MSGPACK
    assert shape(sent(traj)) == shape(traj)


def test_the_pool_hands_workers_exactly_what_was_sent(
    runs: list[Trajectory], processes: Engine
) -> None:
    trajs = [runs[1], *(odd(runs[0], case) for case in CASES)]
    outcomes = processes.map(received, trajs)
    assert [o.value for o in outcomes] == [shape(t) for t in trajs]
