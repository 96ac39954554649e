"""The store against a hostile user: a full disk, read-only media, files that are not stores
(a FIFO, a stray byte, an empty file, a truncated store) and text that is not valid Unicode.
Real files, real SQLite, the real entry point; only the full disk is made with SQLite's own
page limit, so that no test needs to mount a file system."""

from __future__ import annotations

import multiprocessing
import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

import agentlens
from agentlens.errors import StoreError
from agentlens.store import Metric, Record, Run, SqlStore, digest, open_store
from agentlens.store.records import IMPORT_SCORER, import_records
from tests.cli.conftest import Run as CliRun
from tests.conftest import BENCH

TASK = BENCH / "trajectories" / "django__django-11066"
ONE = sorted(TASK.glob("*.json"))[0]
RunCli = Callable[..., CliRun]


def _one_line(result: CliRun, *wanted: str) -> str:
    assert result.code == 2, (result.out, result.err)
    assert "Traceback" not in result.err and "internal error" not in result.err
    (line,) = result.err.strip().splitlines()
    for text in wanted:
        assert text in line, line
    return line


@pytest.fixture(scope="module")
def real_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("real") / "real.db"
    trajectories = agentlens.read_paths([str(TASK)]).trajectories
    with open_store(str(path)) as store:
        store.save(Run(kind="import", scorer=IMPORT_SCORER), trajectories,
                   import_records(trajectories))  # fmt: skip
    return path


def test_a_full_disk_is_reported_as_full_and_saves_nothing(tmp_path: Path) -> None:
    trajectories = agentlens.read_paths([str(TASK)]).trajectories
    with open_store(str(tmp_path / "s.db")) as store:
        pages = store._db.execute("PRAGMA page_count").fetchone()[0]
        store._db.execute(f"PRAGMA max_page_count = {pages + 20}")  # the disk fills up here
        with pytest.raises(StoreError, match="full") as raised:
            store.save(Run(kind="import", scorer=IMPORT_SCORER), trajectories,
                       import_records(trajectories))  # fmt: skip
        assert "rollback" not in str(raised.value)
        assert store.runs() == [] and store.stats()["steps"] == 0
        store._db.execute("PRAGMA max_page_count = 1073741823")
        store.save(Run(kind="import", scorer=IMPORT_SCORER), trajectories[:2],
                   import_records(trajectories[:2]))  # fmt: skip
        assert len(store.runs()) == 1


@pytest.fixture
def read_only(tmp_path: Path, real_store: Path) -> Iterator[Path]:
    """A folder holding a copy of the real store that nothing may write: a read-only mount for
    root (whom file modes do not stop), else file modes."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() != 0:
        shutil.copy(real_store, folder / "s.db")
        (folder / "s.db").chmod(0o444)
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    mounted = subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode:
        pytest.skip(f"cannot mount a tmpfs: {mounted.stderr.decode().strip()}")
    try:
        shutil.copy(real_store, folder / "s.db")
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_a_store_on_read_only_media_can_be_read(read_only: Path, run_cli: RunCli) -> None:
    url = str(read_only / "s.db")
    info = run_cli("store", "info", "--store", url)
    assert info.code == 0, info.err
    assert "1 run, 40 records" in info.out
    runs = run_cli("store", "runs", "--json", "--store", url)
    run_id = msgspec.json.decode(runs.out.splitlines()[0])["id"]
    assert run_cli("store", "show", run_id[:8], "--store", url).code == 0
    report = run_cli("report", run_id[:8], "--store", url, "-o", str(read_only.parent / "r.html"))
    assert report.code == 0, report.err
    assert sorted(p.name for p in read_only.iterdir()) == ["s.db"]


def test_writing_a_store_on_read_only_media_is_one_line(read_only: Path, run_cli: RunCli) -> None:
    url = str(read_only / "s.db")
    with open_store(url, create=False) as store:
        run_id = store.runs()[0].id
    _one_line(run_cli("store", "rm", run_id, "--store", url), f"store {url}", "read")
    _one_line(run_cli("store", "import", str(ONE), "--store", url), f"store {url}", "read")
    new = str(read_only / "new.db")
    _one_line(run_cli("store", "import", str(ONE), "--store", new), f"store {new}", "read-only")


def test_a_fifo_is_refused_at_once(tmp_path: Path, run_cli: RunCli) -> None:
    fifo = tmp_path / "s.db"
    os.mkfifo(fifo)
    _one_line(run_cli("store", "info", "--store", str(fifo)), "not a regular file")
    _one_line(run_cli("store", "import", str(ONE), "--store", str(fifo)), "not a regular file")


def test_a_small_file_that_is_not_sqlite_is_not_overwritten(
    tmp_path: Path, run_cli: RunCli
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"x")
    _one_line(run_cli("store", "import", str(ONE), "--store", str(notes)), "not a SQLite")
    _one_line(run_cli("store", "info", "--store", str(notes)), "not a SQLite")
    assert notes.read_bytes() == b"x"


def test_reading_an_empty_file_does_not_make_it_a_store(tmp_path: Path, run_cli: RunCli) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    _one_line(run_cli("store", "info", "--store", str(empty)), "empty", "store import")
    assert empty.stat().st_size == 0
    assert run_cli("store", "import", str(ONE), "--store", str(empty)).code == 0  # writing may


@pytest.mark.parametrize("keep", [0.5, 0.01, 7], ids=["half", "1%", "7 bytes"])
def test_a_truncated_store_is_called_damaged(
    keep: float, tmp_path: Path, real_store: Path, run_cli: RunCli
) -> None:
    data = real_store.read_bytes()
    cut = tmp_path / "cut.db"
    cut.write_bytes(data[: int(len(data) * keep) if keep < 1 else int(keep)])
    line = _one_line(run_cli("store", "info", "--store", str(cut)), f"store {cut}", "damaged")
    assert "not an AgentLens store" not in line


def test_a_store_below_a_file_is_one_line_naming_the_store(tmp_path: Path, run_cli: RunCli) -> None:
    (tmp_path / "afile").touch()
    url = str(tmp_path / "afile" / "s.db")
    _one_line(run_cli("store", "import", str(ONE), "--store", url), f"store {url}", "not a folder")


def test_a_trace_whose_file_name_is_not_utf8_is_imported(tmp_path: Path, run_cli: RunCli) -> None:
    folder = tmp_path / "traces"
    folder.mkdir()
    shutil.copy(ONE, os.path.join(os.fsencode(folder), b"run-\xff\xfe-pass-1.json"))
    url = str(tmp_path / "s.db")
    imported = run_cli("store", "import", str(folder), "--store", url)
    assert imported.code == 0, imported.err
    with open_store(url, create=False) as store:
        (row,) = store.trajectories()
        back = store.trajectory(row["digest"])
        (record,) = store.records(store.runs()[0].id)
    assert (back.source.path or "").endswith("run-\\xff\\xfe-pass-1.json")  # its bytes shown
    assert record.trajectory == row["digest"] == digest(back)


def test_lone_surrogates_anywhere_are_kept_as_replacement_characters(store: SqlStore) -> None:
    (real,) = agentlens.read_path(ONE)
    bad = "a\ud800b\udcff"
    steps = [msgspec.structs.replace(real.steps[0], observation=f"out {bad}"), *real.steps[1:]]
    t = msgspec.structs.replace(real, id=f"id-{bad}", model=bad, steps=steps)
    record = Record(
        trajectory=digest(t), trajectory_id=t.id, model=t.model, body={"note": bad, bad: [bad]},
        metrics=[Metric(name="m", value=1.0, label=bad, reason=bad)],
    )  # fmt: skip
    run = store.save(Run(kind="import", scorer="x/1", label=bad, settings={"p": [bad]}), [t],
                     [record])  # fmt: skip
    fixed = "a\ufffdb\ufffd"
    back = store.trajectory(record.trajectory)
    assert (back.id, back.model, back.steps[0].observation) == (
        f"id-{fixed}",
        fixed,
        f"out {fixed}",
    )
    assert back.steps[1:] == real.steps[1:]
    (kept,) = store.records(run)
    assert (kept.trajectory_id, kept.body) == (f"id-{fixed}", {"note": fixed, fixed: [fixed]})
    assert (kept.metrics[0].label, kept.metrics[0].reason) == (fixed, fixed)
    assert (store.run(run).label, store.run(run).settings) == (fixed, {"p": [fixed]})


def test_a_full_disk_keeps_the_previous_trajectory_file_whole(
    tmp_path: Path, real_store: Path
) -> None:
    limit = 40_000  # bytes a file may grow to; above the 32 KiB of SQLite's -shm file

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    with open_store(str(real_store), create=False) as store:
        row = max(store.trajectories(), key=lambda r: r["n_steps"])
    out = tmp_path / "t.jsonl"
    out.write_text("the previous file")
    command = [sys.executable, "-m", "agentlens", "store", "trajectory", row["digest"]]
    result = subprocess.run(
        [*command, "--store", str(real_store), "-o", str(out)],
        capture_output=True, text=True, preexec_fn=small_files, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert str(out) in line and "File too large" in line and "Traceback" not in line
    assert out.read_text() == "the previous file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"]


def test_new_step_rows_are_those_this_save_added(store: SqlStore) -> None:
    trajectories = agentlens.read_paths([str(TASK)]).trajectories
    added = []
    for part in (trajectories[:10], trajectories, trajectories):
        before = store.stats()["steps"]
        store.save(Run(kind="import", scorer=IMPORT_SCORER), part, import_records(part))
        assert store.new_steps == store.stats()["steps"] - before
        added.append(store.new_steps)
    assert added[0] > 0 and added[1] > 0 and added[2] == 0


def test_imports_running_at_once_report_only_their_own_new_rows(tmp_path: Path) -> None:
    url = str(tmp_path / "s.db")
    command = [sys.executable, "-m", "agentlens", "store", "import", str(TASK), "--store", url]
    processes = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    printed = [p.communicate(timeout=300) for p in processes]
    assert [p.returncode for p in processes] == [0] * 4, printed
    new = [int(out.split("(")[1].split(" new step rows")[0].replace(",", "")) for out, _ in printed]
    with open_store(url, create=False) as store:
        assert len(store.runs()) == 4
        assert sum(new) == store.stats()["steps"], new


def test_a_trajectory_is_never_written_over_its_store(
    tmp_path: Path, real_store: Path, run_cli: RunCli
) -> None:
    copy = tmp_path / "results.db"
    shutil.copy(real_store, copy)
    with open_store(str(copy), create=False) as store:
        key = store.trajectories()[0]["digest"]
    _one_line(run_cli("store", "trajectory", key, "--store", str(copy), "-o", str(copy)),
              "is the store itself")  # fmt: skip
    assert run_cli("store", "info", "--store", str(copy)).code == 0


def test_a_limit_past_64_bits_is_a_usage_error(store_url: str, run_cli: RunCli) -> None:
    assert run_cli("store", "import", str(ONE), "--store", store_url).code == 0
    result = run_cli("store", "runs", "--limit", str(10**20), "--store", store_url)
    assert result.code == 2
    assert "Invalid value for '--limit'" in result.err and "Traceback" not in result.err
    assert (
        run_cli("store", "runs", "--limit", "0", "--json", "--store", store_url).out.count("\n")
        == 1
    )


def _open_when_told(path: str, barrier: Any, results: Any) -> None:
    barrier.wait()
    try:
        open_store(path).close()
        results.put("ok")
    except StoreError as exc:
        results.put(str(exc))


def _rounds_of_openers(folder: str, rounds: int, reports: Any) -> None:
    """In a spawned process: each round, 4 forked openers of a new store, started at one moment;
    what they said goes to `reports`. Forked from this small process they start fast, so they
    meet; forked from the test process, grown large by earlier tests, the 240 forks took 15 s."""
    context = multiprocessing.get_context("fork")
    for round_ in range(rounds):
        path, barrier, results = (
            str(Path(folder) / f"s{round_}.db"),
            context.Barrier(4),
            context.Queue(),
        )
        openers = [
            context.Process(target=_open_when_told, args=(path, barrier, results)) for _ in range(4)
        ]
        for opener in openers:
            opener.start()
        for opener in openers:
            opener.join(timeout=60)
        reports.put([results.get(timeout=5) for _ in openers])


def test_processes_opening_a_new_sqlite_store_at_once_all_get_it(tmp_path: Path) -> None:
    """Switching a new file to WAL does not wait for SQLite's lock: 4 openers at one moment got
    "database is locked" in 4 of 40 rounds before it was retried."""
    rounds, context = 60, multiprocessing.get_context("spawn")
    reports = context.Queue()
    runner = context.Process(target=_rounds_of_openers, args=(str(tmp_path), rounds, reports))
    runner.start()
    try:
        for round_ in range(rounds):
            assert reports.get(timeout=120) == ["ok"] * 4, f"round {round_}"
    finally:
        runner.join(timeout=30)
        if runner.is_alive():
            runner.kill()
