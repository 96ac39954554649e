"""The store on real trajectories: lossless round trips, content addressing, runs and records,
migrations and bad input. Each test runs on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

import itertools

import msgspec
import pytest

from agentlens.errors import StoreError
from agentlens.formats.stream import read_paths
from agentlens.store import Metric, Record, Run, SqlStore, digest, open_store
from agentlens.store.migrations import SCHEMA_VERSION
from agentlens.store.records import import_records
from agentlens.trajectory import Trajectory
from tests.conftest import BENCH, FORMATS

MIXED = [
    FORMATS / "claude-code",
    FORMATS / "openhands",
    FORMATS / "swe-agent",
    FORMATS / "inspect-ai",
    FORMATS / "codex",
    FORMATS / "gemini-cli",
    BENCH / "trajectories" / "django__django-11066",
]


@pytest.fixture(scope="module")
def real() -> list[Trajectory]:
    trajectories = read_paths([str(p) for p in MIXED]).trajectories
    assert len({t.source.format for t in trajectories}) >= 7
    return trajectories


def _import(store: SqlStore, trajectories: list[Trajectory], **run: str) -> str:
    return store.save(
        Run(kind="import", scorer="import/1", **run), trajectories, import_records(trajectories)
    )


def test_every_trajectory_comes_back_exactly_as_saved(
    store: SqlStore, real: list[Trajectory]
) -> None:
    run_id = _import(store, real)
    records = store.records(run_id)
    assert [r.trajectory_id for r in records] == [t.id for t in real]
    for original, record in zip(real, records, strict=True):
        assert store.trajectory(record.trajectory) == original
    with_subagents = [t for t in real if t.subtrajectories]
    assert with_subagents, "the Claude Code sample has sub-agent files"
    back = store.trajectory(digest(with_subagents[0]))
    assert [s.id for s in back.subtrajectories] == [s.id for s in with_subagents[0].subtrajectories]


def test_saving_again_adds_no_step_rows_and_shared_prefixes_are_kept_once(
    store: SqlStore, real: list[Trajectory]
) -> None:
    _import(store, real)
    first = store.stats()
    assert first["steps_referenced"] == sum(len(t.steps) for t in real)
    _import(store, real)
    again = store.stats()
    assert (again["steps"], again["trajectories"]) == (first["steps"], first["trajectories"])
    assert again["runs"] == 2 and again["records"] == 2 * len(real)

    longest = max(real, key=lambda t: len(t.steps))
    fork = msgspec.structs.replace(
        longest,
        id=longest.id + "-fork",
        steps=[*longest.steps[:-1], msgspec.structs.replace(longest.steps[-1], text="other end")],
    )
    _import(store, [fork])
    assert store.stats()["steps"] == again["steps"] + 1  # only the changed last step is new
    assert store.trajectory(digest(fork)) == fork


def test_the_digest_changes_with_any_byte_of_content(real: list[Trajectory]) -> None:
    t = max(real, key=lambda t: len(t.steps))
    middle = len(t.steps) // 2
    changed = msgspec.structs.replace(
        t,
        steps=[
            *t.steps[:middle],
            msgspec.structs.replace(
                t.steps[middle], observation=(t.steps[middle].observation or "") + "."
            ),
            *t.steps[middle + 1 :],
        ],
    )
    assert digest(changed) != digest(t)
    assert digest(msgspec.structs.replace(t, model="other")) != digest(t)
    assert digest(msgspec.structs.replace(t)) == digest(t)


def test_runs_are_listed_newest_first_and_filtered(store: SqlStore, real: list[Trajectory]) -> None:
    ids = [_import(store, real[:2], label=f"r{i}") for i in range(3)]
    scored = store.save(
        Run(kind="score", scorer="process/paper/1"),
        real[:1],
        [Record(trajectory=digest(real[0]), trajectory_id=real[0].id)],
    )
    listed = store.runs()
    assert listed[0].id == scored  # saved last; same-second ties are broken by id, not lost
    assert {r.id for r in listed} == {*ids, scored}
    assert [r.id for r in store.runs(kind="score")] == [scored]
    assert len(store.runs(limit=2)) == 2
    assert store.run(scored[:8]).kind == "score"


def test_records_keep_their_order_and_their_metrics(
    store: SqlStore, real: list[Trajectory]
) -> None:
    metrics = [
        Metric(name="score", value=61.25, label="solid", reason="0.4*struct + …"),
        Metric(name="tier", label="solid"),
        Metric(name="value", value=-0.5, step=3),
        Metric(name="value", value=0.25, step=1),
    ]
    records = [
        Record(trajectory=digest(t), trajectory_id=t.id, task_id=t.task_id, model=t.model,
               outcome=t.outcome.status, metrics=metrics[: i % 5], body={"i": i, "nested": [i, None]})
        for i, t in enumerate(reversed(real))
    ]  # fmt: skip
    run_id = store.save(Run(kind="score", scorer="x/1", settings={"k": [1, 2]}), real, records)
    back = store.records(run_id)
    assert back == records
    assert store.run(run_id).settings == {"k": [1, 2]}
    assert store.run(run_id).n_records == len(records)


def test_positions_find_a_trajectorys_records_in_a_run(
    store: SqlStore, real: list[Trajectory]
) -> None:
    twice = [real[0], real[1], real[0]]
    records = [Record(trajectory=digest(t), trajectory_id=t.id) for t in twice]
    run_id = store.save(Run(kind="score", scorer="x/1"), real, records)
    assert store.positions(run_id[:8], digest(real[0])) == [0, 2]
    assert store.positions(run_id, digest(real[1])) == [1]
    assert store.positions(run_id, digest(real[2])) == []


def test_a_record_about_an_unsaved_trajectory_is_refused_and_nothing_is_written(
    store: SqlStore, real: list[Trajectory]
) -> None:
    stray = Record(trajectory="0" * 64, trajectory_id="nowhere")
    with pytest.raises(StoreError, match="not given"):
        store.save(Run(kind="score", scorer="x/1"), real[:1], [stray])
    assert store.stats()["trajectories"] == 0 and store.runs() == []


def test_a_failing_save_rolls_back_everything(store: SqlStore, real: list[Trajectory]) -> None:
    bad = Record(trajectory=digest(real[0]), trajectory_id=real[0].id, body={"x": {1, 2}})
    with pytest.raises(TypeError):  # a set is not JSON: found while the transaction is open
        store.save(Run(kind="score", scorer="x/1"), real[:1], [bad])
    stats = store.stats()
    assert (stats["runs"], stats["trajectories"], stats["steps"]) == (0, 0, 0)


def test_lookups_by_prefix_and_their_errors(store: SqlStore, real: list[Trajectory]) -> None:
    run_id = _import(store, real)
    one = digest(real[0])
    assert store.trajectory(one[:10]).id == real[0].id
    with pytest.raises(StoreError, match="no run 'ffff"):
        store.run("ffff" if not run_id.startswith("ffff") else "eeee")
    with pytest.raises(StoreError, match="not an id"):
        store.run("%")
    with pytest.raises(StoreError, match="ambiguous"):
        store.trajectory(_shared_prefix(store))
    with pytest.raises(StoreError, match=f"store {store.url}"):
        store.trajectory("0" * 64)


def _shared_prefix(store: SqlStore) -> str:
    digests = sorted(row["digest"] for row in store.trajectories())
    for a, b in itertools.pairwise(digests):
        if a[0] == b[0]:
            return a[0]
    pytest.skip("no two digests share a first character")


def test_delete_run_keeps_the_trajectories(store: SqlStore, real: list[Trajectory]) -> None:
    keep, gone = _import(store, real), _import(store, real)
    store.delete_run(gone)
    assert [r.id for r in store.runs()] == [keep]
    assert store.stats()["records"] == len(real)
    assert store.stats()["metrics"] == sum(len(r.metrics) for r in store.records(keep))
    assert store.trajectory(digest(real[0])) == real[0]


def test_the_schema_after_all_migrations(store: SqlStore) -> None:
    assert store.schema_version == SCHEMA_VERSION
    columns = _columns(store)
    assert columns["steps"] == ["hash", "parent", "position", "body"]
    assert columns["runs"] == [
        "id", "kind", "scorer", "label", "created", "agentlens_version", "settings", "summary",
        "n_records",
    ]  # fmt: skip
    assert columns["records"] == [
        "run_id", "position", "trajectory", "trajectory_id", "task_id", "model", "outcome", "body",
    ]  # fmt: skip
    assert columns["metrics"] == [
        "run_id", "position", "ordinal", "name", "step", "value", "label", "reason",
    ]  # fmt: skip
    assert columns["trajectories"][:3] == ["digest", "head", "n_steps"]


def _columns(store: SqlStore) -> dict[str, list[str]]:
    tables = ("steps", "trajectories", "runs", "records", "metrics")
    out = {}
    for table in tables:
        rows = store._rows(f"SELECT * FROM {table} WHERE 1 = 0", ())
        assert rows == []
        cursor = store._db.execute(f"SELECT * FROM {table} WHERE 1 = 0")
        out[table] = [c[0] for c in cursor.description]
    return out


def test_reopening_migrates_nothing_and_a_newer_schema_is_refused(store_url: str) -> None:
    with open_store(store_url) as first:
        first._exec("INSERT INTO agentlens_migrations (version, applied) VALUES (?, ?)", (99, "x"))
    with pytest.raises(StoreError, match="newer AgentLens"):
        open_store(store_url)


def test_opening_twice_at_once_migrates_once(store_url: str) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        stores = list(pool.map(lambda _: open_store(store_url), range(4)))
    assert {s.schema_version for s in stores} == {SCHEMA_VERSION}
    for s in stores:
        s.close()


def test_a_damaged_store_gives_a_store_error_naming_what(
    store: SqlStore, real: list[Trajectory]
) -> None:
    run_id = _import(store, real[:2])
    one, two = (digest(t) for t in real[:2])
    store._exec("UPDATE trajectories SET meta = ? WHERE digest = ?", (b"\x28\xb5\x2f\xfdjunk", one))
    with pytest.raises(StoreError, match=f"trajectory {one[:12]} is damaged"):
        store.trajectory(one)
    assert len(real[1].steps) > 1
    head = "SELECT head FROM trajectories WHERE digest = ?"
    store._exec(
        f"DELETE FROM steps WHERE hash = (SELECT parent FROM steps WHERE hash = ({head}))", (two,)
    )
    with pytest.raises(StoreError, match="steps are in the store"):
        store.trajectory(two)
    store._exec("UPDATE records SET body = ? WHERE run_id = ?", (b"not zstd", run_id))
    with pytest.raises(StoreError, match="is damaged"):
        store.records(run_id)


def test_one_record_by_position(store: SqlStore, real: list[Trajectory]) -> None:
    run_id = _import(store, real)
    every = store.records(run_id)
    assert [store.records(run_id, position=i) for i in range(len(every))] == [[r] for r in every]
    assert store.records(run_id, position=len(every)) == []
