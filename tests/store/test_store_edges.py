"""The store at its edges: odd values (NaN, NUL, very long trajectories), id lookups, database
errors, other programs' files and printed URLs. Each test runs on SQLite and on Postgres."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import msgspec
import pytest

from agentlens.errors import StoreError
from agentlens.store import Metric, Record, Run, SqlStore, digest, open_store, printable_url
from agentlens.trajectory import Agent, Source, Step, Trajectory
from tests.conftest import needed


def _trajectory(tid: str = "t", steps: int = 2, **fields: object) -> Trajectory:
    return Trajectory(
        id=tid,
        source=Source(format="jsonl"),
        steps=[Step(index=i, kind="tool", command=f"ls {i}", observation="x" * 50)
               for i in range(steps)],
        **fields,  # type: ignore[arg-type]
    )  # fmt: skip


def _record(t: Trajectory, *metrics: Metric) -> Record:
    return Record(trajectory=digest(t), trajectory_id=t.id, model=t.model, metrics=list(metrics))


def test_a_nan_metric_is_no_value_on_both_backends_and_infinities_stay(store: SqlStore) -> None:
    t = _trajectory()
    run = store.save(
        Run(kind="stepvalue", scorer="x/1"),
        [t],
        [_record(t, Metric(name="a", value=math.nan), Metric(name="b", value=-math.inf, step=2))],
    )
    (back,) = store.records(run)
    assert [(m.name, m.value) for m in back.metrics] == [("a", None), ("b", -math.inf)]


def test_nul_characters_in_ids_and_reasons_do_not_stop_a_save(store: SqlStore) -> None:
    t = _trajectory("run\x00one", model="m\x00", agent=Agent(name="a\x00"))
    run = store.save(
        Run(kind="score", scorer="x/1", label="l\x00"),
        [t],
        [_record(t, Metric(name="score", value=1.0, reason="read \x00 bytes"))],
    )
    assert store.trajectory(digest(t)) == t  # the trajectory itself comes back exactly
    (back,) = store.records(run)
    kept = "\x00" if store._dialect.name == "sqlite" else "\ufffd"  # Postgres text has no NUL
    assert back.trajectory_id == f"run{kept}one"
    assert back.metrics[0].reason == f"read {kept} bytes"
    assert store.run(run).label == f"l{kept}"


def test_a_20000_step_trajectory_round_trips(store: SqlStore) -> None:
    t = _trajectory("long", steps=20_000)
    store.save(Run(kind="import", scorer="import/1"), [t], [_record(t)])
    assert store.trajectory(digest(t)) == t


def test_an_exact_id_wins_over_a_longer_one_it_starts(store: SqlStore) -> None:
    for run_id in ("abc", "abcd", "abce"):
        store.save(Run(kind="import", scorer="import/1", id=run_id), [], [])
    assert store.run("abc").id == "abc"
    assert store.run("abcd").id == "abcd"
    with pytest.raises(StoreError, match="ambiguous"):
        store.run("ab")


def test_id_lookups_are_case_sensitive_on_both_backends(store: SqlStore) -> None:
    t = _trajectory()
    run = store.save(Run(kind="import", scorer="import/1", id="deadbeef"), [t], [_record(t)])
    with pytest.raises(StoreError, match="no run 'DEAD'"):
        store.run("DEAD")
    key = digest(t)
    upper = key[: next(i for i, c in enumerate(key) if c.isalpha()) + 1].upper()
    with pytest.raises(StoreError, match=f"no trajectory '{upper}'"):
        store.trajectory(upper)
    assert store.run(run[:4]).id == run


def test_a_full_digest_is_found_through_the_index(tmp_path: Path) -> None:
    """With `LIKE`, every lookup scanned the table: O(n) per trajectory, O(n²) per run."""
    with open_store(str(tmp_path / "s.db")) as store:
        many = [_trajectory(f"t{i}", steps=1) for i in range(50)]
        store.save(Run(kind="import", scorer="import/1"), many, [_record(t) for t in many])
        run_id = store.runs()[0].id
        seen: list[str] = []
        store._db.set_trace_callback(seen.append)
        store.trajectory(digest(many[7]))
        store.run(run_id)
        store._db.set_trace_callback(None)
        plans = [
            detail
            for sql in seen
            if sql.lstrip().upper().startswith("SELECT") and "WITH RECURSIVE" not in sql
            for *_, detail in store._db.execute("EXPLAIN QUERY PLAN " + sql).fetchall()
        ]
    assert plans and not [p for p in plans if p.startswith("SCAN")], plans


def test_a_database_error_is_a_store_error_naming_the_store(store: SqlStore) -> None:
    t = _trajectory()
    run = Run(kind="import", scorer="import/1")
    store.save(run, [t], [_record(t)])
    with pytest.raises(StoreError, match=f"^store {store.url}: .*") as raised:
        store.save(run, [t], [_record(t)])  # the same run id again
    assert "\n" not in str(raised.value)
    assert len(store.runs()) == 1


def test_another_programs_sqlite_database_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "places.sqlite"
    with sqlite3.connect(path) as other:
        other.execute("CREATE TABLE bookmarks (url TEXT)")
    before = path.read_bytes()
    with pytest.raises(StoreError, match=r"not an AgentLens store.*bookmarks"):
        open_store(str(path))
    assert path.read_bytes() == before
    with sqlite3.connect(path) as other:
        tables = other.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    assert tables == [("bookmarks",)]


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://me:s3cret@db.example:5432/x", "postgresql://me:***@db.example:5432/x"),
        ("postgresql://me@db/x?sslmode=require&password=s3cret",
         "postgresql://me@db/x?sslmode=require&password=***"),
        ("postgres://me:s3cret@[::1]:5433/x", "postgres://me:***@[::1]:5433/x"),
        ("postgresql://me:s3cret@db:notaport/x", "postgresql://me:***@db:notaport/x"),
        ("results.db", "results.db"),
    ],
)  # fmt: skip
def test_printed_urls_hide_the_password(url: str, shown: str) -> None:
    assert printable_url(url) == shown


def test_a_password_in_the_query_is_not_printed_when_connecting_fails() -> None:
    needed("psycopg")
    with pytest.raises(StoreError) as raised:
        open_store("postgresql://me@127.0.0.1:1/x?password=s3cret&connect_timeout=2")
    assert "s3cret" not in str(raised.value) and "cannot connect" in str(raised.value)


def test_a_bad_port_is_a_store_error() -> None:
    needed("psycopg")
    with pytest.raises(StoreError, match="cannot connect") as raised:
        open_store("postgresql://me:s3cret@127.0.0.1:notaport/x")
    assert "s3cret" not in str(raised.value)


def test_records_that_name_one_trajectory_twice_keep_both(store: SqlStore) -> None:
    t = _trajectory()
    twin = msgspec.structs.replace(t, steps=[*t.steps, Step(index=2, kind="agent", text="more")])
    run = store.save(
        Run(kind="score", scorer="x/1"), [t, t, twin], [_record(t), _record(t), _record(twin)]
    )
    assert [r.trajectory for r in store.records(run)] == [digest(t), digest(t), digest(twin)]
    assert store.run_trajectories(run) == [t, twin]  # one id, two contents: both kept
