"""`cohort` reads runs to a spill file and keeps a `RunRef` of each (`process.cohort_runs`): what
a worker reads back is exactly what `read_paths` gives, ids fixed by the batch and sidecar labels
included, a work unit carries references, not trajectories, and what stays in memory per run is
small (issue 25)."""

from __future__ import annotations

import os
import pickle
import shutil
import tracemalloc
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agentlens.formats.run_table import RunTable
from agentlens.formats.stream import read_paths
from agentlens.process.cohort_runs import RunRef, RunSpill, hydrate, read_cohort, spilled_units
from agentlens.process.cohort_splits import spilled_splits
from agentlens.process.protocol_notes import unscored_tasks
from agentlens.process.protocols import split_cohort
from agentlens.process.run_units import TaskSplit
from agentlens.trajectory import Trajectory
from tests.conftest import BENCH, DATA

FOLDERS = [
    DATA / "formats",  # every reader, sidecars, ids that only the batch tells apart
    DATA / "mini-swe-agent-swebv",
    DATA / "swe-agent-java",
    BENCH / "trajectories" / "psf__requests-1724",
]


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_spilled_runs_come_back_as_read_paths_gives_them(folder: Path) -> None:
    whole = read_paths([str(folder)])
    with read_cohort([str(folder)]) as (stream, spill):
        assert [r.id for r in spill.refs] == [t.id for t in whole.trajectories]
        assert [r.outcome.status for r in spill.refs] == [
            t.outcome.status for t in whole.trajectories
        ]
        where = [(r.source.path, r.source.format, r.source.index) for r in spill.refs]
        assert where == [
            (t.source.path, t.source.format, t.source.index) for t in whole.trajectories
        ]
        assert [r.task_id for r in spill.refs] == [t.task_id for t in whole.trajectories]
        failures = [(f.path, f.format, f.reason) for f in stream.failures]
        assert failures == [(f.path, f.format, f.reason) for f in whole.failures]
        assert stream.warnings == whole.warnings
        assert stream.skipped == whole.skipped and stream.unread == whole.unread
        back = spill.load(spill.refs)
    assert back == whole.trajectories


def test_the_protocol_splits_refs_as_it_splits_trajectories() -> None:
    folder = BENCH / "trajectories"
    whole = read_paths([str(folder)]).trajectories
    expected = [
        (s.task_id, [t.id for t in s.donors], [t.id for t in s.scored])
        for s in split_cohort(whole, "agentlens-bench")
    ]
    with read_cohort([str(folder)]) as (_, spill):
        splits = split_cohort(spill.refs, "agentlens-bench")
    assert [(s.task_id, [r.id for r in s.donors], [r.id for r in s.scored]) for s in splits] == (
        expected
    )


@pytest.mark.parametrize("protocol", ["agentlens-bench", "leave-one-out"])
@pytest.mark.parametrize("k", [None, 3])
def test_a_spilled_cohort_splits_by_position_as_its_trajectories_split(
    protocol: str, k: int | None
) -> None:
    """The splits made a task at a time from the spill's columns, by position, are those of the
    trajectories read whole, and so are the tasks left unscored (several here)."""
    folders = [str(BENCH / "trajectories"), str(DATA / "mini-swe-agent-swebv")]
    whole = read_paths(folders).trajectories
    splits = split_cohort(whole, protocol, k=k)
    expected = _named_runs(splits)
    with read_cohort(folders) as (_, spill):
        by_position, unscored = spilled_splits(spill, protocol, k=k, seed=42)
        named = _named(spill, by_position)
    assert named == expected
    assert unscored == unscored_tasks(whole, splits, protocol)
    assert unscored


def _named_runs(splits: list[TaskSplit[Trajectory]]) -> list[tuple[str, list[str], list[str]]]:
    return [(s.task_id, [t.id for t in s.donors], [t.id for t in s.scored]) for s in splits]


def _named(spill: RunSpill, splits: list[TaskSplit[int]]) -> list[tuple[str, list[str], list[str]]]:
    """Each split of positions with its runs' ids, as `_named_runs` gives a split of runs."""
    ids = spill.table.id_at
    return [(s.task_id, [ids(p) for p in s.donors], [ids(p) for p in s.scored]) for s in splits]


def test_a_unit_names_its_runs_instead_of_carrying_them() -> None:
    folder = BENCH / "trajectories" / "psf__requests-1724"
    with read_cohort([str(folder)]) as (_, spill):
        splits, _ = spilled_splits(spill, "agentlens-bench", k=None, seed=42)
        (unit,) = spilled_units([splits], spill, local=True)
        (shipped,) = spilled_units([splits], spill, local=False)
        assert unit.packed is None and shipped.packed is not None
        small, large = len(pickle.dumps(unit)), len(pickle.dumps(shipped))
        assert small * 5 < large, (small, large)
        runs = hydrate(unit)
        assert runs == hydrate(shipped)
    whole = read_paths([str(folder)]).trajectories
    assert sorted(t.id for t in runs) == sorted(t.id for t in whole)


def test_a_cohort_keeps_a_small_ref_per_run_not_a_trajectory() -> None:
    """What the first pass leaves in memory per run (the difference between 399 runs and one
    task's 32, so that what a batch holds once cancels out): the refs wait in a table on disk,
    so what is left is the position kept (4 bytes) and bounded caches filling (redaction's,
    the sidecar finder's): ~260 bytes (~350 with the refs as columns in memory, ~670 with a
    `RunRef` object per run; ~8 KB with the trajectory stubs kept before)."""
    every, one = BENCH / "trajectories", BENCH / "trajectories" / "psf__requests-1724"
    with read_cohort([str(every)]):  # imports and caches warmed, not counted
        pass
    kept = {}
    for folder in (one, every):
        tracemalloc.start()
        try:
            with read_cohort([str(folder)]) as (_, spill):
                assert all(type(r) is RunRef for r in spill.refs)
                kept[len(spill.refs)] = tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
    (small, low), (large, high) = sorted(kept.items())
    per_run = (high - low) / (large - small)
    assert per_run < 320, f"{per_run:.0f} bytes kept per run"


def test_the_table_on_disk_keeps_odd_names_renames_and_drops(tmp_path: Path) -> None:
    """The refs wait in a SQLite table (`formats.run_table`): a file name that is not UTF-8
    (a lone surrogate once decoded), two copies of one run told apart by their folders (both
    renamed) and a file named twice (the repeat dropped, out of every task) come back from it
    as `read_paths` gives them, and the protocol splits them alike."""
    task = BENCH / "trajectories" / "psf__requests-1724"
    for copy in ("a", "b"):
        shutil.copytree(task, tmp_path / copy / task.name)
    odd = tmp_path / "a" / task.name / os.fsdecode(b"odd-\xff.json")
    shutil.copy(sorted(task.glob("*.json"))[-1], odd)
    specs = [str(tmp_path), str(odd)]  # `odd` named twice: the repeat is dropped
    whole = read_paths(specs)
    assert any("named again" in f.reason for f in whole.failures)
    splits = split_cohort(whole.trajectories, "agentlens-bench")
    expected = _named_runs(splits)
    with read_cohort(specs) as (_, spill):
        assert [(r.id, r.source.path) for r in spill.refs] == [
            (t.id, t.source.path) for t in whole.trajectories
        ]
        by_position, _ = spilled_splits(spill, "agentlens-bench", k=None, seed=42)
        named = _named(spill, by_position)
    assert named == expected
    assert any("odd-" in t.source.path for t in whole.trajectories)


def test_the_table_gives_back_a_lone_surrogate_as_it_went_in(tmp_path: Path) -> None:
    """An id or a task from a trace's text may hold a lone surrogate (JSON's `\\ud800`), which
    SQLite's text cannot carry: the table keeps the bytes, and the run comes back equal."""
    table = RunTable(str(tmp_path))
    odd = RunRef("run-\ud800", "task-\udfff", "/data/\ud800", ".json", True, "claude-code",
                 None, "passed", 0)  # fmt: skip
    table.add(odd, (0, 10, 20))
    assert table.ref(0) == odd
    assert table.task_refs("task-\udfff") == [odd]
    assert table.span(0) == (0, 10, 20)
    table.close()


def test_a_full_disk_under_the_table_is_one_line_naming_it(tmp_path: Path) -> None:
    """SQLite's "database or disk is full" is not an `OSError`: it reached the CLI as an
    internal error (exit 3). It is the table file's error now, as a full disk under the spill
    files is (failure injected: the table may grow by a few pages only)."""
    table = RunTable(str(tmp_path))
    table._db.execute("PRAGMA max_page_count = 3")
    ref = RunRef("run", "task", "/data", ".json", True, "claude-code", None, "passed", 0)
    with pytest.raises(OSError, match="full") as raised:
        for position in range(20_000):
            table.add(
                msgspec.structs.replace(ref, id=f"run-{position}", position=position), (0, 0, 1)
            )
        table.ref(0)
    assert raised.value.filename == table.path
    table.close()


def test_a_walk_over_the_refs_is_one_query_not_one_a_run() -> None:
    """`agentlens score` walks its runs' refs three times (the reference's warnings, the work,
    the results), and each run was a query of its own, ~10 µs (~3 s a walk of 100k runs), its
    span another. A walk is now one query, spans included, and gives what the queries a run
    gave, past the runs the batch dropped."""
    from agentlens.process.cohort_runs import spilled_runs

    with read_cohort([str(DATA / "formats")]) as (_, spill):
        spill.drop({3, 4, 10, 11, 12, 13, 14, 15, 16, 17, 40})
        kept = list(spill.refs.keys)
        refs = [spill.table.ref(p) for p in kept]
        spans = [spill.span_at(p) for p in kept]
        statements: list[str] = []
        spill.table._db.set_trace_callback(statements.append)
        assert list(spill.refs) == refs
        assert len(statements) == 1, f"{len(statements)} queries for {len(kept)} runs"
        runs = spilled_runs(spill, local=True)
        assert [(r.id, r.span) for r in runs] == [
            (r.id, s) for r, s in zip(refs, spans, strict=True)
        ]
        assert len(statements) == 2
        spill.table._db.set_trace_callback(None)
    assert len(kept) > 50 and kept[-1] > 40


def test_the_copy_check_asks_no_file_the_walk_found_its_size_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same-content check (`copied_files`) compares the sizes of a task's files first: it
    asked each file's again (a `stat` a run, ~100k at 100k runs) when the batch's walk had
    just asked it. The walk's size is kept with each run's ref now; the copies found are the
    same (a task's folder copied into a sub-folder: six runs twice)."""
    from agentlens.process.cohort_splits import TaskRuns
    from agentlens.process.protocol_notes import copied_files

    task = BENCH / "trajectories" / "psf__requests-1724"
    files = sorted(task.glob("*.json"))[:6]
    for folder in (tmp_path / "a", tmp_path / "a" / "backup"):
        folder.mkdir()
        for f in files:
            (folder / f.name).write_bytes(f.read_bytes())
    asked: list[str] = []
    stat = os.stat

    def counted(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        asked.append(os.fspath(path))
        return stat(path, *args, **kwargs)

    with read_cohort([str(tmp_path / "a")]) as (_, spill):
        with monkeypatch.context() as patched:
            patched.setattr(os, "stat", counted)
            copies = copied_files(TaskRuns(spill))
        assert asked == [], f"{len(asked)} files asked their size again"
        assert [r.size for r in spill.refs] == [os.stat(r.source.path).st_size for r in spill.refs]
    assert sorted(copies) == sorted(f"{tmp_path}/a/backup/{f.name} = {tmp_path}/a/{f.name}"
                                    for f in files)  # fmt: skip


def test_many_copies_of_one_run_are_named_a_few_then_counted(tmp_path: Path) -> None:
    """Every copy was named in one `same content` line: 20,000 copies of a Codex stream made a
    700 KB line. The first few are named now, then how many more."""
    from agentlens.process.cohort_splits import TaskRuns
    from agentlens.process.protocol_notes import copied_files

    real = BENCH.parent / "formats/codex/jnarowski-agentcmd/stream/stream-output-1.jsonl"
    for n in range(30):
        (tmp_path / f"r{n:02d}.jsonl").write_bytes(real.read_bytes())
    with read_cohort([str(tmp_path)]) as (_, spill):
        (copies,) = copied_files(TaskRuns(spill))
    shown = [f"{tmp_path}/r{n:02d}.jsonl" for n in range(4)]
    assert copies == " = ".join(shown) + " (+26 more)"
