"""Any trajectory the model can hold comes back from the store exactly as saved, and content
addressing depends on content only: generated trajectories (unicode text, nested raw JSON,
timestamps with and without a zone, usage, sub-trajectories, forks of one another)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentlens.store import Run, digest, open_store
from agentlens.store.content import split
from agentlens.store.records import import_records
from agentlens.trajectory import Agent, Outcome, Source, Step, ToolCategory, Trajectory, Usage

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)
json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | text
    | st.floats(allow_nan=False, allow_infinity=False)
)
raw = st.recursive(
    json_leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)  # fmt: skip
zones = st.sampled_from(
    [None, UTC, timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=8))]
)
moments = st.builds(
    lambda s, tz: datetime(2026, 1, 1, tzinfo=tz) + timedelta(microseconds=s),
    st.integers(0, 10**13), zones,
)  # fmt: skip
usage = st.builds(Usage, prompt_tokens=st.integers(0, 10**7), completion_tokens=st.integers(0, 10**6),
                  cached_tokens=st.integers(0, 10**6))  # fmt: skip


@st.composite
def steps(draw: st.DrawFn) -> list[Step]:
    count = draw(st.integers(0, 6))
    return [
        Step(
            index=i,
            kind=draw(st.sampled_from(["system", "user", "agent", "tool"])),
            text=draw(text),
            tool_name=draw(st.none() | text),
            category=draw(st.none() | st.sampled_from(list(ToolCategory))),
            arguments=draw(st.dictionaries(text, raw, max_size=2)),
            command=draw(st.none() | text),
            files=draw(st.lists(text, max_size=2)),
            observation=draw(st.none() | text),
            is_error=draw(st.none() | st.booleans()),
            timestamp=draw(st.none() | moments),
            usage=draw(st.none() | usage),
            cost=draw(st.none() | st.floats(0, 10)),
            raw=draw(raw),
        )
        for i in range(count)
    ]


@st.composite
def trajectories(draw: st.DrawFn, depth: int = 1) -> Trajectory:
    subs = draw(st.lists(trajectories(depth=0), max_size=1)) if depth else []
    return Trajectory(
        id=draw(text), task_id=draw(st.none() | text), task=draw(st.none() | text),
        agent=Agent(name=draw(st.none() | text)), model=draw(st.none() | text),
        outcome=Outcome(status=draw(st.sampled_from(["passed", "failed", "unknown"]))),
        source=Source(format=draw(text), path=draw(text)), steps=draw(steps()),
        reported_usage=draw(st.none() | usage), subtrajectories=subs,
        metadata=draw(st.dictionaries(text, raw, max_size=3)),
    )  # fmt: skip


_names = itertools.count()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batch=st.lists(trajectories(), min_size=1, max_size=4))
def test_any_trajectory_round_trips_and_forks_share_their_prefix(
    batch: list[Trajectory], tmp_path: Path
) -> None:
    # a fork of the first: the same steps but the last, which changes
    first = batch[0]
    if first.steps:
        changed = msgspec.structs.replace(first.steps[-1], text=first.steps[-1].text + "!")
        batch.append(msgspec.structs.replace(first, steps=[*first.steps[:-1], changed]))
    # what the store must give back is the trajectory as its own JSON encoding reads it back
    expected = [msgspec.json.decode(msgspec.json.encode(t), type=Trajectory) for t in batch]
    with open_store(str(tmp_path / f"s{next(_names)}.db")) as store:
        run = store.save(Run(kind="import", scorer="import/1"), batch, import_records(batch))
        for want, record in zip(expected, store.records(run), strict=True):
            assert store.trajectory(record.trajectory) == want
            assert record.trajectory == digest(want)  # the digest of what comes back is the key
        distinct = list({digest(t): t for t in batch}.values())
        chains = [[row.hash for row in split(t).steps] for t in distinct]
        stats = store.stats()
    assert stats["trajectories"] == len(distinct)
    assert stats["steps"] == len({key for chain in chains for key in chain})  # each row once
    if len(first.steps) > 1:  # the fork shares all but its last step's row with the first
        fork, original = split(batch[-1]).steps, split(first).steps
        assert [r.hash for r in fork[:-1]] == [r.hash for r in original[:-1]]
        assert fork[-1].hash != original[-1].hash
