"""`agentlens store …` and `score --store` through the real entry point, on real traces."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agentlens.formats.stream import read_paths
from agentlens.store import Run as Run_
from agentlens.store import digest, open_store
from agentlens.store.records import IMPORT_SCORER, import_records
from tests.cli.conftest import Run
from tests.conftest import BENCH

TASK = BENCH / "trajectories" / "django__django-11066"


def test_import_then_list_show_and_export(
    run_cli: Callable[..., Run], store_url: str, tmp_path: Path
) -> None:
    imported = run_cli("store", "import", str(TASK), "--store", store_url, "--run-label", "dj")
    assert imported.code == 0, imported.err
    expected = read_paths([str(TASK)]).trajectories
    assert f"imported {len(expected)} trajectories" in imported.out

    listed = run_cli("store", "runs", "--json", "--store", store_url)
    (run,) = [json.loads(line) for line in listed.out.splitlines()]
    assert (run["kind"], run["label"], run["n_records"]) == ("import", "dj", len(expected))

    shown = run_cli("store", "show", run["id"][:8], "--json", "--store", store_url)
    header, *records = [json.loads(line) for line in shown.out.splitlines()]
    assert header["id"] == run["id"]
    steps = {
        r["trajectory_id"]: next(m["value"] for m in r["metrics"] if m["name"] == "steps")
        for r in records
    }
    assert steps == {t.id: len(t.steps) for t in expected}

    out = tmp_path / "one.jsonl"
    exported = run_cli(
        "store", "trajectory", digest(expected[0])[:12], "-o", str(out), "--store", store_url
    )
    assert exported.code == 0, exported.err
    from agentlens.formats.jsonl import load_jsonl

    assert load_jsonl(out) == [expected[0]]


def test_score_store_keeps_every_result_with_its_reasons(
    run_cli: Callable[..., Run], store_url: str, tmp_path: Path
) -> None:
    ref = tmp_path / "ref.json"
    assert run_cli("reference", "build", str(TASK), "-o", str(ref)).code == 0
    printed = run_cli("score", str(TASK), "--reference", str(ref), "--json", "--store", store_url)
    assert printed.code == 0, printed.err
    assert "stored" in printed.err
    scores = {d["trajectory_id"]: d for d in map(json.loads, printed.out.splitlines())}
    with open_store(store_url) as store:
        (run,) = store.runs(kind="score")
        records = store.records(run.id)
    # the reference was built under the default profile, and `score` follows the reference
    assert run.scorer == "process/calibrated/1" and run.settings["profile"] == "calibrated"
    assert {r.trajectory_id: r.body for r in records} == scores
    for r in records:
        score = r.metric("score")
        assert score is not None and score.value == scores[r.trajectory_id]["score"]
        assert score.reason == scores[r.trajectory_id]["score_reason"]
        assert r.metric("tier").label == (scores[r.trajectory_id]["tier"] or "none")


def test_import_keeps_going_past_a_corrupt_file_and_exits_1(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    good = sorted(TASK.glob("*.json"))[:3]
    for path in good:
        shutil.copy(path, folder / path.name)
    data = good[0].read_bytes()
    (folder / "broken_pta.json").write_bytes(data[: len(data) // 2])
    db = tmp_path / "s.db"
    result = run_cli("store", "import", str(folder), "--store", str(db))
    assert result.code == 1
    assert "imported 3 trajectories" in result.out
    assert "broken_pta.json" in result.err and "Traceback" not in result.err
    with open_store(str(db)) as store:
        assert store.stats()["trajectories"] == 3


POSTGRES_REFUSAL = (
    "cannot connect" if importlib.util.find_spec("psycopg") else "pip install 'agentlens[postgres]'"
)


def test_bad_store_and_bad_ids_get_one_line(run_cli: Callable[..., Run], tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database" * 100)
    for args, message in (
        (("store", "runs", "--store", str(junk)), "not an AgentLens store"),
        (("store", "runs", "--store", str(tmp_path)), "is a folder"),
        (("store", "show", "abc123", "--store", str(tmp_path / "new.db")), "new.db: no such file"),
        (
            ("compare", "store:abc", "store:def", "--store", str(tmp_path / "typo.db")),
            "no such file",
        ),
        (("store", "runs", "--store", "postgresql://u:secret@127.0.0.1:1/x"), POSTGRES_REFUSAL),
    ):
        result = run_cli(*args)
        assert result.code == 2, (args, result.err)
        assert message in result.err and "Traceback" not in result.err
        assert "secret" not in result.err
        assert len(result.err.strip().splitlines()) == 1, result.err
    assert not (tmp_path / "new.db").exists() and not (tmp_path / "typo.db").exists()
    empty = tmp_path / "empty.db"
    open_store(str(empty)).close()
    result = run_cli("store", "show", "abc123", "--store", str(empty))
    assert result.code == 2 and "no run 'abc123'" in result.err


def test_two_processes_write_one_sqlite_store_at_once(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    files = sorted(TASK.glob("*.json"))
    halves = [files[::2], files[1::2]]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "agentlens",
                "store",
                "import",
                *map(str, half),
                "--store",
                str(db),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for half in halves
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    with open_store(str(db)) as store:
        assert len(store.runs()) == 2
        assert store.stats()["trajectories"] == len(files)


@pytest.mark.parametrize("command", ["rm", "info"])
def test_rm_and_info(run_cli: Callable[..., Run], tmp_path: Path, command: str) -> None:
    db = str(tmp_path / "s.db")
    run_cli("store", "import", str(TASK), "--store", db)
    with open_store(db) as store:
        run_id = store.runs()[0].id
    if command == "rm":
        assert run_cli("store", "rm", run_id[:6], "--store", db).code == 0
        with open_store(db) as store:
            assert store.runs() == [] and store.stats()["trajectories"] > 0
    else:
        info = run_cli("store", "info", "--store", db)
        assert info.code == 0 and "schema 1" in info.out and "1 run," in info.out


def test_compare_reads_stored_runs_as_it_reads_folders(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    db = str(tmp_path / "s.db")
    a, b = BENCH / "trajectories" / "psf__requests-1724", TASK
    for folder in (a, b):
        assert run_cli("store", "import", str(folder), "--store", db).code == 0
    with open_store(db) as store:
        newest, oldest = (r.id for r in store.runs())
    from_files = run_cli("compare", str(a), str(b), "--json")
    stored = run_cli(
        "compare", f"store:{oldest[:8]}", f"store:{newest[:8]}", "--json", "--store", db
    )
    assert stored.code == from_files.code

    def checks(out: str) -> list[tuple[object, ...]]:
        return [(c["name"], c["v1"], c["v2"], c["alert"]) for c in json.loads(out)["checks"]]

    assert checks(stored.out) == checks(from_files.out) and len(checks(stored.out)) > 3
    missing = run_cli("compare", "store:ffffff", str(b), "--store", db)
    assert missing.code == 2 and "no run 'ffffff'" in missing.err


def test_compare_does_not_pass_a_gate_on_an_incomplete_stored_run(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    """A stored run whose command stopped before its last part holds only some trajectories: as
    with files it could not read, the gate says so and does not exit 0."""
    db = str(tmp_path / "s.db")
    half = read_paths([str(TASK)]).trajectories[:20]
    with open_store(db) as store:
        whole = store.save(Run_(kind="import", scorer=IMPORT_SCORER), half, import_records(half))
        store.save_part(Run_(kind="import", scorer=IMPORT_SCORER, id="half-saved"), half,
                        import_records(half))  # fmt: skip
    same = run_cli("compare", f"store:{whole[:8]}", f"store:{whole[:8]}", "--store", db)
    assert same.code == 0, same.err  # these trajectories alone pass the gate
    partial = run_cli("compare", f"store:{whole[:8]}", "store:half-saved", "--store", db)
    assert partial.code == 1
    assert "store:half-saved: incomplete: its command stopped" in partial.err.replace("\n", " ")


def test_a_limited_listing_says_more_runs_are_stored(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    """`store runs` lists the newest 50 by default; with more stored it said `50 runs in …`, as
    if that were all of them."""
    store = str(tmp_path / "r.db")
    for task in ("django__django-11066", "psf__requests-1724"):
        path = str(BENCH / "trajectories" / task)
        assert run_cli("store", "import", path, "--store", store).code == 0
    limited = run_cli("store", "runs", "--limit", "1", "--store", store)
    assert limited.code == 0, limited.err
    title = " ".join(limited.out.split())
    assert "the newest 1 of 2 runs in" in title and "--limit 0 lists all" in title
    everything = " ".join(run_cli("store", "runs", "--store", store).out.split())
    assert "2 runs in" in everything and "newest" not in everything
    one = " ".join(
        run_cli("store", "runs", "--kind", "import", "--limit", "1", "--store", store).out.split()
    )
    assert "the newest 1 of 2 runs in" in one
    single = str(tmp_path / "one.db")
    assert (
        run_cli(
            "store", "import", str(BENCH / "trajectories" / "psf__requests-1724"), "--store", single
        ).code
        == 0
    )
    alone = run_cli("store", "runs", "--store", single).out
    assert " ".join(alone.split()).startswith("1 run in "), alone  # was `1 runs in …`


@pytest.mark.parametrize("width", [60, 80])
def test_store_runs_on_a_narrow_terminal_is_a_block_per_run(
    run_cli: Callable[..., Run], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    """Below the table's width each run is a line that starts with its id, then an indented
    line; a long label is never cut, nor left at the margin where it reads as another run."""
    from agentlens.cli._app import console

    store, label = str(tmp_path / "r.db"), "nightly-runs-of-the-django-project-2026-12-07"
    for task, extra in (
        ("django__django-11066", ("--run-label", label)),
        ("psf__requests-1724", ()),
    ):
        imported = run_cli(
            "store", "import", str(BENCH / "trajectories" / task), "--store", store, *extra
        )
        assert imported.code == 0, imported.err
    listed = run_cli("store", "runs", "--json", "--store", store).out
    runs = [json.loads(line) for line in listed.splitlines()]
    monkeypatch.setattr(console, "width", width)
    title, *lines = run_cli("store", "runs", "--store", store).out.splitlines()
    assert title.startswith("2 runs in")
    starts = [line.split()[0] for line in lines if not line.startswith(" ")]
    assert starts == [run["id"][:12] for run in runs]
    (labelled,) = [i for i, line in enumerate(lines) if label in line]
    assert lines[labelled].startswith("  ") and lines[labelled - 1].startswith(runs[-1]["id"][:12])
