"""Saves into one Postgres store at once, as a team's processes and parallel CI jobs make them:
they run side by side (no lock held across saves), never deadlock on the step and trajectory rows
they share, each counts only the step rows it added, and all wait for a migration under way.
Real trajectories, a real server, real processes."""

from __future__ import annotations

import itertools
import multiprocessing
import os
import random
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

import pytest

from agentlens.formats.stream import read_paths
from agentlens.store import Run, SqlStore, content, digest, open_store
from agentlens.store.records import IMPORT_SCORER, import_records
from agentlens.trajectory import Trajectory
from tests.conftest import BENCH
from tests.store.postgres_server import fresh_database

TASKS = sorted(str(p) for p in (BENCH / "trajectories").iterdir())
_names = itertools.count()


@pytest.fixture
def url(postgres_url: str) -> str:
    """A new, migrated database (so that only the saves race)."""
    name = f"agentlens_concurrent_{os.getpid()}_{next(_names)}"
    migrated = fresh_database(postgres_url, name)
    open_store(migrated).close()
    return migrated


def _task(i: int) -> list[Trajectory]:
    return read_paths([TASKS[i]]).trajectories


def _import(store: SqlStore, trajectories: list[Trajectory]) -> str:
    run = Run(kind="import", scorer=IMPORT_SCORER)
    return store.save(run, trajectories, import_records(trajectories))


def _step_keys(trajectories: list[Trajectory]) -> set[str]:
    return {row.hash for t in trajectories for row in content.split(t).steps}


def _round_tasks(rounds: int) -> dict[int, str]:
    """The task folders the rounds save from (round r: tasks 2r and 2r+1), by index."""
    return {i % len(TASKS): TASKS[i % len(TASKS)] for i in range(2 * rounds)}


def _save_in_rounds(url: str, seed: int, rounds: int, barrier: Any, results: Any) -> None:
    """One process's saves (in a spawned process): in round r, a sample of tasks 2r and 2r+1,
    started with every other process's round r."""
    try:
        tasks = {i: read_paths([folder]).trajectories for i, folder in _round_tasks(rounds).items()}
        rng, saved = random.Random(seed), []
        with open_store(url) as store:
            for r in range(rounds):
                pool = tasks[2 * r % len(TASKS)] + tasks[(2 * r + 1) % len(TASKS)]
                trajectories = rng.sample(pool, 60)
                barrier.wait(timeout=60)
                run_id = _import(store, trajectories)
                saved.append((run_id, store.new_steps, [digest(t) for t in trajectories]))
        results.put((seed, saved, ""))
    except BaseException as exc:
        barrier.abort()  # the others stop at the next round, not a minute later
        results.put((seed, [], f"{type(exc).__name__}: {exc}"))


def test_processes_saving_overlapping_trajectories_at_once_all_succeed_and_count_exactly(
    url: str,
) -> None:
    # every round, four processes save 60 trajectories each of the same two tasks, each its own
    # sample in its own order, so they race over the same new rows; with the rows inserted in
    # the order given, or sorted only within each chunk of 50 trajectories, some save was aborted
    # as a deadlock in every run tried
    n, rounds = 4, 4
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(n), context.Queue()
    processes = [
        context.Process(target=_save_in_rounds, args=(url, i, rounds, barrier, results))
        for i in range(n)
    ]
    for process in processes:
        process.start()
    try:
        reported = sorted(results.get(timeout=120) for _ in processes)
    finally:
        for process in processes:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()
    assert [error for *_, error in reported] == [""] * n, reported  # no deadlock, nor else
    saves = [save for _, saved, _ in reported for save in saved]
    assert len(saves) == n * rounds and len({run_id for run_id, _, _ in saves}) == n * rounds

    folders = _round_tasks(rounds).values()
    every = {digest(t): t for folder in folders for t in read_paths([folder]).trajectories}
    stored = {key for _, _, keys in saves for key in keys}
    with open_store(url) as store:
        stats = store.stats()
        assert stats["runs"] == n * rounds and stats["trajectories"] == len(stored)
        # the step rows the saves say they added are the distinct step rows there are
        assert sum(new for _, new, _ in saves) == stats["steps"]
        assert stats["steps"] == len(_step_keys([every[key] for key in stored]))
        for run_id, _, keys in saves:
            assert store.run(run_id).n_records == len(keys)
            assert store.records(run_id) == import_records([every[key] for key in keys])
        for key in stored:
            assert store.trajectory(key) == every[key]


class _Held:
    """Holds `store`'s next save open, its rows written, until released (then it commits, or
    rolls back when `fail`)."""

    def __init__(self, store: SqlStore, monkeypatch: pytest.MonkeyPatch, fail: bool = False):
        self.inside, self.release = threading.Event(), threading.Event()
        insert = store._insert_records

        def held(run_id: str, records: Any, **start: int) -> None:
            insert(run_id, records, **start)
            self.inside.set()
            assert self.release.wait(60)
            if fail:
                raise RuntimeError("this save fails after writing its rows")

        monkeypatch.setattr(store, "_insert_records", held)

    def wait_inside(self, save: Future[str]) -> None:
        deadline = time.monotonic() + 60
        while not self.inside.wait(0.05):
            if save.done():
                save.result()  # its error
            assert time.monotonic() < deadline, "the held save never got to its records"


def test_a_save_goes_through_while_another_process_holds_its_save_open(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = _task(0), _task(1)
    assert not _step_keys(first) & _step_keys(second)  # the second needs none of the first's rows
    # the threads end before the connections close (the pool is left first)
    with open_store(url) as holder, open_store(url) as other, ThreadPoolExecutor(2) as pool:
        held = _Held(holder, monkeypatch)
        try:
            holding = pool.submit(_import, holder, first)
            held.wait_inside(holding)
            meanwhile = pool.submit(_import, other, second)
            done, _ = wait([meanwhile], timeout=15)
            still_open = not holding.done()
        finally:
            held.release.set()
        assert meanwhile in done, "a save waited for another process's open save to end"
        assert still_open  # the first was still open when the second committed
        runs = [holding.result(timeout=60), meanwhile.result()]
        assert holder.new_steps + other.new_steps == other.stats()["steps"]
        for run_id, trajectories in zip(runs, (first, second), strict=True):
            assert other.records(run_id) == import_records(trajectories)
            assert other.run_trajectories(run_id) == trajectories


def _wait_event(watcher: SqlStore, store: SqlStore) -> tuple[str | None, str | None]:
    """What `store`'s session is waiting for, as Postgres reports it: ("Lock", "transactionid")
    while an insert waits for another transaction that inserted the same key to end."""
    (row,) = watcher._rows(
        "SELECT wait_event_type, wait_event FROM pg_stat_activity WHERE pid = ?",
        (store._db.info.backend_pid,),
    )
    return row["wait_event_type"], row["wait_event"]


def _waiting_for_a_row(watcher: SqlStore, store: SqlStore, running: Future[str]) -> bool:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and not running.done():
        if _wait_event(watcher, store) == ("Lock", "transactionid"):
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize("first_commits", [True, False], ids=["commits", "rolls-back"])
def test_a_save_waits_only_for_the_rows_it_shares_and_counts_only_what_it_added(
    url: str, monkeypatch: pytest.MonkeyPatch, first_commits: bool
) -> None:
    task = _task(2)
    first, second = task[: len(task) // 2], list(reversed(task))  # the second, all of them
    with (
        open_store(url) as holder,
        open_store(url) as other,
        open_store(url) as watcher,
        ThreadPoolExecutor(2) as pool,
    ):
        held = _Held(holder, monkeypatch, fail=not first_commits)
        try:
            holding = pool.submit(_import, holder, first)
            held.wait_inside(holding)
            meanwhile = pool.submit(_import, other, second)
            waited = _waiting_for_a_row(watcher, other, meanwhile)
        finally:
            held.release.set()
        assert waited, "the second save did not wait on a row the open save had inserted"
        if first_commits:
            holding.result(timeout=60)
        else:
            with pytest.raises(RuntimeError, match="fails after writing"):
                holding.result(timeout=60)
        run_id = meanwhile.result(timeout=60)
        stats = watcher.stats()
        assert stats["runs"] == (2 if first_commits else 1)
        assert stats["steps"] == len(_step_keys(task))
        # the second added what the first did not (or, rolled back, all of it)
        mine = _step_keys(task) - (_step_keys(first) if first_commits else set())
        assert other.new_steps == len(mine)
        assert watcher.records(run_id) == import_records(second)
        assert watcher.run_trajectories(run_id) == second


def test_two_processes_saving_parts_of_one_run_at_once_both_add_theirs(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the same `cohort --store` started twice (a retried CI job): with its trajectories stored
    # already, two parts shared no row to wait on, so both took the same next positions and one
    # failed with "duplicate key value violates unique constraint records_pkey"
    task = _task(3)
    first, second, seed = task[:10], task[10:20], task[20:21]
    run = Run(kind="score", scorer="process/paper/1", id="parts-at-once")
    with (
        open_store(url) as holder,
        open_store(url) as other,
        open_store(url) as watcher,
        ThreadPoolExecutor(2) as pool,
    ):
        _import(watcher, task)
        watcher.save_part(run, seed, import_records(seed))  # the run exists
        held = _Held(holder, monkeypatch)
        try:
            holding = pool.submit(holder.save_part, run, first, import_records(first))
            held.wait_inside(holding)
            meanwhile = pool.submit(other.save_part, run, second, import_records(second))
            waited = _waiting_for_a_row(watcher, other, meanwhile)
        finally:
            held.release.set()
        assert waited and (holding.result(timeout=60), meanwhile.result(timeout=60)) == (10, 10)
        records = watcher.records(run.id, bodies=False)
        assert len(records) == watcher.run(run.id).n_records == 21
        assert sorted(r.trajectory_id for r in records) == sorted(
            t.id for t in seed + first + second
        )


def test_two_saves_taking_shared_rows_in_opposite_orders_do_not_deadlock(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # two tasks' trajectories, given in opposite orders; each save stops at its first step row
    # not of the task it was given first, until the other has got there too or waits for a row
    # it holds: with the rows inserted in the order given, each then holds rows the other needs
    x, y = _task(5)[:4], _task(6)[:4]
    assert not _step_keys(x) & _step_keys(y)
    with (
        open_store(url) as a,
        open_store(url) as b,
        open_store(url) as watcher,
        ThreadPoolExecutor(2) as pool,
    ):
        there = {id(a): threading.Event(), id(b): threading.Event()}

        def stopping(store: SqlStore, other: SqlStore, first: set[str]) -> None:
            many = store._many

            def in_two(sql: str, rows: Any) -> int:
                if not sql.startswith("INSERT INTO steps"):
                    return many(sql, rows)
                cut = next((i for i, row in enumerate(rows) if row[0] not in first), len(rows))
                added = many(sql, rows[:cut])
                there[id(store)].set()
                deadline = time.monotonic() + 30
                while not there[id(other)].wait(0.01) and _wait_event(watcher, other)[0] != "Lock":
                    assert time.monotonic() < deadline, "the other save went nowhere"
                return added + many(sql, rows[cut:])

            monkeypatch.setattr(store, "_many", in_two)

        stopping(a, b, _step_keys(x))
        stopping(b, a, _step_keys(y))
        saves = [pool.submit(_import, a, x + y), pool.submit(_import, b, y + x)]
        wait(saves, timeout=60)
        run_ids = [save.result(timeout=0) for save in saves]  # neither aborted as a deadlock
        assert a.new_steps + b.new_steps == watcher.stats()["steps"] == len(_step_keys(x + y))
        assert [watcher.run_trajectories(run_id) for run_id in run_ids] == [x + y, y + x]


def test_a_save_waits_for_a_migration_under_way(url: str) -> None:
    import psycopg

    from agentlens.store.postgres import _MIGRATION_LOCK

    trajectories = _task(7)[:3]
    with (
        psycopg.connect(url, autocommit=True) as migrating,
        open_store(url) as store,
        open_store(url) as watcher,
        ThreadPoolExecutor(1) as pool,
    ):
        with migrating.transaction():  # what a migration's transaction takes first
            migrating.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            saving = pool.submit(_import, store, trajectories)
            deadline = time.monotonic() + 15
            while _wait_event(watcher, store) != ("Lock", "advisory"):
                assert not saving.done() and time.monotonic() < deadline, "the save did not wait"
                time.sleep(0.02)
        run_id = saving.result(timeout=60)
        assert watcher.run_trajectories(run_id) == trajectories
