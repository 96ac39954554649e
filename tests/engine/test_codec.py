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
    elif case == "lone surrogate in text":  # Python's json reads a `\\ud800` escape into one
        step = msgspec.structs.replace(step, text="half \ud800 of a pair")
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
    "lone surrogate in text",
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


def json_value(value: object) -> bool:
    """The documented rule, spelled recursively: str, 64-bit int, float, bool, None, and lists
    and str-keyed dicts of them (exact types: a str or int subclass is not JSON)."""
    kind = type(value)
    if kind in (str, float, bool) or value is None:
        return True
    if kind is int:
        return -(2**63) <= value < 2**64  # type: ignore[operator]
    if kind is list:
        return all(json_value(v) for v in value)  # type: ignore[attr-defined]
    if kind is dict:
        return all(type(k) is str and json_value(v) for k, v in value.items())  # type: ignore[attr-defined]
    return False


def test_the_stack_walk_answers_as_the_rule_on_random_values() -> None:
    import random

    class Name(str):
        pass

    rng = random.Random(11)
    leaves = [1, "a", 0.5, True, None, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1, (1,),
              Name("x"), b"x", datetime(2025, 1, 1), set(), float("nan")]  # fmt: skip

    def value(depth: int) -> object:
        roll = rng.random()
        if depth > 3 or roll < 0.4:
            return rng.choice(leaves)
        if roll < 0.7:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        keys = ["a", "b", "c", "d", Name("e"), 1]
        return {rng.choices(keys, [30, 30, 30, 30, 1, 1])[0]: value(depth + 1) for _ in range(3)}

    answers = [_codec._plain(v) == json_value(v) or v for v in (value(0) for _ in range(50000))]
    assert all(a is True for a in answers), [a for a in answers if a is not True][:3]
    assert 5000 < sum(_codec._plain(value(0)) for _ in range(20000)) < 15000
