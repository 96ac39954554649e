"""`cohort --store`: the run, its records and trajectories saved a task at a time; the same
cohort run again adds nothing (resumed or repeated), and the viewer shows the run. On SQLite
and on a real PostgreSQL server."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from starlette.testclient import TestClient

from agentlens.errors import StoreError
from agentlens.store import digest, open_store
from agentlens.viewer import create_app
from tests.cli.conftest import Run
from tests.conftest import BENCH

TASKS = [BENCH / "trajectories" / t for t in ("psf__requests-1724", "pallets__flask-5014")]
COHORT = ("cohort", *map(str, TASKS), "--protocol", "agentlens-bench", "--profile", "sdk-compat")


def test_cohort_store_saves_every_row_once_and_resumes(
    run_cli: Callable[..., Run], store_url: str, tmp_path: Path
) -> None:
    rows_path = tmp_path / "rows.jsonl"
    first = run_cli(*COHORT, "--no-tables", "--out", str(rows_path), "--store", store_url)
    assert first.code == 0, first.err
    rows = [json.loads(line) for line in rows_path.read_text().splitlines()]
    assert f"stored {len(rows)} new records" in first.err
    with open_store(store_url) as store:
        (run,) = store.runs()
        records = store.records(run.id)
        assert (run.kind, run.n_records, run.settings["protocol"]) == (
            "score",
            len(rows),
            "agentlens-bench",
        )
        assert sorted(r.trajectory_id for r in records) == sorted(r["trajectory_id"] for r in rows)
        by_id = {r["trajectory_id"]: r for r in rows}
        for record in records:
            assert record.metric("score").value == by_id[record.trajectory_id]["composite"]
            stored = store.trajectory(record.trajectory)
            assert stored.id == record.trajectory_id and stored.steps
            assert digest(stored) == record.trajectory

    again = run_cli(*COHORT, "--no-tables", "--store", store_url)
    assert again.code == 0, again.err
    assert "stored 0 new records" in again.err
    with open_store(store_url) as store:
        (same,) = store.runs()
        assert same.id == run.id and same.n_records == len(rows)
        assert len(store.records(run.id)) == len(rows)


def test_a_partly_saved_run_is_completed_not_duplicated(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    url = str(tmp_path / "r.db")
    whole = run_cli(*COHORT, "--no-tables", "--store", url)
    assert whole.code == 0, whole.err
    with open_store(url) as store:
        (run,) = store.runs()
        records = store.records(run.id)
        store.delete_run(run.id)
        half = records[: len(records) // 2]
        trajectories = [store.trajectory(r.trajectory) for r in half]
        store.save_part(run, trajectories, half)  # as if interrupted half-way
    resumed = run_cli(*COHORT, "--no-tables", "--store", url)
    assert f"stored {len(records) - len(half)} new records" in resumed.err
    with open_store(url) as store:
        (run_again,) = store.runs()
        assert run_again.id == run.id
        again = store.records(run.id)
    assert sorted(r.trajectory_id for r in again) == sorted(r.trajectory_id for r in records)


def test_the_viewer_shows_the_cohort_run(run_cli: Callable[..., Run], tmp_path: Path) -> None:
    url = tmp_path / "v.db"
    assert run_cli(*COHORT, "--no-tables", "--store", str(url), "--run-label", "bench").code == 0
    with open_store(str(url)) as store:
        (stored,) = store.runs()
        records = store.records(stored.id)
    with TestClient(create_app(str(url)), base_url="http://127.0.0.1") as client:
        (run,) = client.get("/api/runs").json()["runs"]
        page = client.get(f"/api/runs/{run['id'][:12]}").json()
    assert (run["label"], run["n_records"]) == ("bench", len(records))
    assert page["total"] == len(records)
    shown = [r["trajectory_id"] for r in page["records"]]
    assert shown == [r.trajectory_id for r in records][: len(shown)] and shown


def test_score_store_run_again_adds_nothing(
    run_cli: Callable[..., Run], store_url: str, tmp_path: Path
) -> None:
    ref = tmp_path / "ref.json"
    assert run_cli("reference", "build", str(TASKS[0]), "-o", str(ref)).code == 0
    first = run_cli("score", str(TASKS[0]), "--reference", str(ref), "--store", store_url)
    assert first.code == 0, first.err
    again = run_cli("score", str(TASKS[0]), "--reference", str(ref), "--store", store_url)
    assert "stored 0 new records" in again.err
    with open_store(store_url) as store:
        (run,) = store.runs()
        n_runs = len(list(TASKS[0].glob("*.json")))
        assert run.n_records == len(store.records(run.id)) == n_runs and run.complete


def test_another_run_label_saves_another_run(run_cli: Callable[..., Run], tmp_path: Path) -> None:
    """`--run-label weekly` after `--run-label nightly` on the same runs: before, it printed
    `stored 0 new records in run …` and the stored run kept the label `nightly`, so
    `report --label weekly` found nothing. Each label is its own run; the same label resumes."""
    url, ref = str(tmp_path / "l.db"), tmp_path / "ref.json"
    assert run_cli("reference", "build", str(TASKS[0]), "-o", str(ref)).code == 0
    score = ("score", str(TASKS[0]), "--reference", str(ref), "--store", url)
    cohort = (*COHORT, "--no-tables", "--store", url)
    for command in (score, cohort):
        for label in ("nightly", "weekly", "weekly"):
            assert run_cli(*command, "--run-label", label).code == 0
    with open_store(url) as store:
        runs = store.runs()
        labels = sorted((r.settings.get("command", "score"), r.label, r.n_records) for r in runs)
    n_files = len(list(TASKS[0].glob("*.json")))
    cohort_records = next(n for command, _, n in labels if command == "cohort")
    assert labels == [
        ("cohort", "nightly", cohort_records),
        ("cohort", "weekly", cohort_records),
        ("score", "nightly", n_files),
        ("score", "weekly", n_files),
    ]


def test_a_cohort_that_scores_nothing_names_no_run(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    """astropy__astropy-13236 has 3 passing runs, short of agentlens-bench's 5 donors: nothing is
    scored, so nothing is saved. Before, stderr said `stored 0 new records in run 0dbf09aa364d`,
    a run no `store` command could then find."""
    url = str(tmp_path / "n.db")
    task = BENCH / "trajectories" / "astropy__astropy-13236"
    result = run_cli("cohort", str(task), "--protocol", "agentlens-bench", "--store", url)
    assert result.code == 0, result.err
    err = " ".join(result.err.split())
    assert "in run" not in err and "nothing stored in" in err and "no run was scored" in err
    with open_store(url) as store:
        assert store.runs() == []


def test_a_pool_stores_what_serial_stores(run_cli: Callable[..., Run], tmp_path: Path) -> None:
    """A pool's workers read their runs again from the files (the first pass skipped
    redaction): the stored trajectories and records are the same, digest for digest."""
    stored = {}
    for engine in ("serial", "processes:2"):
        url = str(tmp_path / f"{engine.replace(':', '_')}.db")
        done = run_cli(*COHORT, "--no-tables", "--store", url, "--engine", engine)
        assert done.code == 0, done.err
        with open_store(url) as store:
            (run,) = store.runs()
            stored[engine] = sorted(
                (r.trajectory_id, r.trajectory, r.body["score"]) for r in store.records(run.id)
            )
    assert stored["serial"] == stored["processes:2"] and stored["serial"]


def _saved_records(url: str) -> int:
    try:
        with open_store(url, create=False) as store:
            return sum(run.n_records for run in store.runs())
    except StoreError:  # not made yet
        return 0


def _cohort_stopped_after_its_first_task(url: str) -> None:
    """A real `cohort --store` of every dev task, sent SIGTERM once its first task is saved."""
    tasks = sorted(str(p) for p in (BENCH / "trajectories").iterdir())
    command = [sys.executable, "-m", "agentlens", "cohort", *tasks, "--protocol",
               "agentlens-bench", "--no-tables", "--store", url]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not _saved_records(url) and process.poll() is None:
            assert time.monotonic() < deadline, "no task was saved in two minutes"
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 143, process.stderr and process.stderr.read()
    finally:
        process.kill()
        process.wait()


def test_an_interrupted_cohort_is_shown_incomplete_until_run_again(
    run_cli: Callable[..., Run], store_url: str, tmp_path: Path
) -> None:
    _cohort_stopped_after_its_first_task(store_url)
    with open_store(store_url) as store:
        (run,) = store.runs()
    assert 0 < run.n_records < 319 and not run.complete  # 319: the whole dev cohort
    listed = run_cli("store", "runs", "--store", store_url)
    assert f"{run.n_records} records (incomplete)" in listed.out  # 80 columns: a block per run
    assert (
        "incomplete: its command stopped"
        in run_cli("store", "show", run.id, "--store", store_url).out
    )
    assert run_cli("report", "--store", store_url, "-o", str(tmp_path / "r.html")).code == 0
    assert "incomplete: its command stopped" in (tmp_path / "r.html").read_text()
    with TestClient(create_app(store_url), base_url="http://127.0.0.1") as client:
        assert client.get("/api/runs").json()["runs"][0]["complete"] is False
        assert client.get(f"/api/runs/{run.id}").json()["run"]["complete"] is False

    tasks = sorted(str(p) for p in (BENCH / "trajectories").iterdir())
    again = run_cli("cohort", *tasks, "--protocol", "agentlens-bench", "--no-tables",
                    "--store", store_url)  # fmt: skip
    assert again.code == 0, again.err
    assert f"stored {319 - run.n_records} new records" in again.err
    with open_store(store_url) as store:
        (whole,) = store.runs()
        records = store.records(whole.id, bodies=False)
    assert whole.id == run.id and whole.complete and whole.n_records == len(records) == 319
    assert len({r.trajectory_id for r in records}) == 319
    assert "incomplete" not in run_cli("store", "runs", "--store", store_url).out


def test_a_run_saved_from_other_contents_is_not_silently_kept(
    run_cli: Callable[..., Run], store_url: str, tmp_path: Path
) -> None:
    """Run again after a trace file changed (here: cut to its first five states), the cohort
    prints new scores; the run must not keep the old record under the same id and say
    "stored 0 new records"."""
    task = tmp_path / TASKS[0].name
    shutil.copytree(TASKS[0], task)
    cohort = ("cohort", str(task), "--protocol", "agentlens-bench", "--no-tables")
    assert run_cli(*cohort, "--store", store_url).code == 0
    with open_store(store_url) as store:
        (run,) = store.runs()
        before = store.records(run.id)
    changed = next(task.glob("*-fail-*.json"))
    doc = json.loads(changed.read_text())
    doc["states"] = dict(list(doc["states"].items())[:5])
    doc["transitions"] = doc["transitions"][:4]
    changed.write_text(json.dumps(doc))

    again = run_cli(*cohort, "--store", store_url)
    assert again.code == 2 and "stored 0 new records" not in again.err
    assert f"run {run.id[:12]} was saved from other contents of" in again.err
    assert changed.stem in again.err and f"agentlens store rm {run.id[:12]}" in again.err
    with open_store(store_url) as store:
        assert store.records(run.id) == before  # nothing half-replaced


def test_ctrl_c_says_what_is_stored_and_how_to_resume(tmp_path: Path) -> None:
    """Ctrl-C in `cohort --store` said only "aborted", though the tasks finished were stored
    and the same command resumes the run: the stop line says both."""
    url = str(tmp_path / "r.db")
    command = [sys.executable, "-m", "agentlens", *COHORT, "--no-tables", "--store", url]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not _saved_records(url) and process.poll() is None:
            assert time.monotonic() < deadline, "no task was saved in a minute"
            time.sleep(0.05)
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C sends: the whole process group
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    with open_store(url) as store:
        (run,) = store.runs()
    assert process.returncode == 130 and not run.complete, err
    assert err.startswith(
        f"stopped: run {run.id[:12]} in {url} holds {run.n_records} records so far (incomplete); "
        "run the same command again (same paths and options) to resume it"
    ), err
    assert err.count("\n") == 1, err  # that line alone: no `aborted` after it (click's Abort)


def test_a_stopped_import_says_it_saved_nothing(tmp_path: Path) -> None:
    """`store import` saves its run whole when it ends: stopped once its store is open (while
    it reads the 399 dev traces), it says that nothing was saved, where, and what to do."""
    url = tmp_path / "i.db"
    command = [sys.executable, "-m", "agentlens", "store", "import",
               str(BENCH / "trajectories"), "--store", str(url)]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not url.exists() and process.poll() is None:
            assert time.monotonic() < deadline, "the store was not opened in a minute"
            time.sleep(0.02)
        os.killpg(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, err
    said = f"stopped before this command saved anything in {url}; run it again to save its run"
    assert err == f"{said}\n"
    with open_store(str(url)) as store:
        assert store.runs() == []
