"""A count of one reads as one: `store info` said "1 runs", `compare` "same 1 tasks", and so did
every line that put a number before a plural noun. All are made by `list_text.counted`; these
are the lines a user meets most, on one real run (and one real pair of runs)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.cli.conftest import Run
from tests.conftest import BENCH, DATA
from tests.viewer.server import running

ONE = DATA / "mini-swe-agent-swebv/trajs/astropy__astropy-12907/astropy__astropy-12907.traj.json"
JAVA = DATA / "swe-agent-java"
TASK = "fasterxml__jackson-core-1142.traj"


def lines(text: str) -> str:
    return " ".join(text.split())  # a line rich wrapped reads as one


def test_the_store_commands_count_one_run_record_and_trajectory(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    store = ("--store", str(tmp_path / "one.db"))
    imported = run_cli("store", "import", str(ONE), *store)
    assert imported.code == 0, imported.err
    assert "imported 1 trajectory (22 new step rows) as run" in lines(imported.out)
    info = lines(run_cli("store", "info", *store).out)
    assert (
        "1 run, 1 record, 4 metrics 1 trajectory, 22 step rows (0 shared steps kept once)" in info
    )
    assert lines(run_cli("store", "runs", *store).out).startswith(f"1 run in {tmp_path}")
    run_id = imported.out.split("as run ")[1].split()[0]
    assert "· import · import/1 · 1 record" in run_cli("store", "show", run_id, *store).out
    assert f"deleted run {run_id} (import, 1 record)" in run_cli("store", "rm", run_id, *store).out


def test_compare_of_one_run_each_says_one_task(run_cli: Callable[..., Run]) -> None:
    a = JAVA / "20240825_SWE-agent_gpt-4o-2024-05-13/trajs" / TASK
    b = JAVA / "20240825_SWE-agent_gpt-4o-mini-2024-07-18/trajs" / TASK
    doc = json.loads(run_cli("compare", str(a), str(b), "--json").out)
    (setup,) = [c for c in doc["checks"] if c["name"] == "setup"]
    assert setup["reason"] == "same 1 task, 1 trajectory each"


def test_reading_and_scoring_one_run_say_one(run_cli: Callable[..., Run], tmp_path: Path) -> None:
    assert lines(run_cli("inspect", str(ONE)).out).startswith("1 trajectory ")
    telemetry = lines(run_cli("telemetry", str(ONE)).out)
    assert telemetry.startswith("1 trajectory ")
    assert "success of 1 call inferred from the output" in telemetry
    task = BENCH / "trajectories" / "psf__requests-1724"
    donor = sorted(task.glob("*-pass-*"))[0]
    ref = tmp_path / "ref.json"
    built = run_cli("reference", "build", str(donor), "-o", str(ref))
    assert "1 branch point, 1 donor →" in lines(built.out), built.err
    scored = run_cli("score", str(donor), "--reference", str(ref))
    assert lines(scored.out).startswith("1 run scored "), scored.err
    converted = run_cli("convert", str(ONE), "--to", "atif", "-o", str(tmp_path / "atif"))
    assert f"wrote 1 atif file to {tmp_path / 'atif'}" in lines(converted.out)


def test_the_viewer_counts_one_run_and_one_trajectory(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    store = tmp_path / "one.db"
    assert run_cli("store", "import", str(ONE), "--store", str(store)).code == 0
    with running(store) as server:
        _, printed, _ = server.stop()
    assert f"(1 run, 1 trajectory in {store}); reachable from" in lines(printed)


def test_store_counts_group_their_thousands(run_cli: Callable[..., Run], tmp_path: Path) -> None:
    """`store info` said `1112 step rows` where the other commands write `1,112`."""
    store = ("--store", str(tmp_path / "task.db"))
    imported = run_cli(
        "store", "import", str(BENCH / "trajectories" / "django__django-11066"), *store
    )
    assert imported.code == 0, imported.err
    assert "(1,112 new step rows)" in lines(imported.out)
    info = lines(run_cli("store", "info", *store).out)
    assert "40 trajectories, 1,112 step rows (" in info
