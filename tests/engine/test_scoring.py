"""Process scoring on every engine gives exactly the serial results, in the same order; a task or
run whose scoring raises is reported in one line and the rest are kept (real dev traces)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import orjson
import pytest

from agentlens.cli import main
from agentlens.engine import get_engine
from agentlens.process.cohort import cohort_report, result_row
from agentlens.process.protocols import (
    MIN_PIECE,
    TaskSplit,
    _cut,
    piece_size,
    score_splits,
    score_tasks,
    split_cohort,
)
from agentlens.process.result import ProcessResult
from agentlens.seams import Engine
from agentlens.trajectory import Trajectory
from tests.conftest import BENCH, needed
from tests.engine.units import FAIL_ON
from tests.process_group import finish_in_group

TRAJ = BENCH / "trajectories"
FOLDERS = [str(TRAJ / t) for t in ("astropy__astropy-13236", "psf__requests-1724")]
BAD_RUN = "psf__requests-1724-logs-gemini-2.5-pro-fail-24944252850_pta"
FAILING = "tests.engine.units:FailingEngine"
KILLING = "tests.engine.units:KillingEngine"
RAY_KILLING = "tests.engine.units:RayKillingEngine"
KILLED = "psf__requests-1724"
ROOT = Path(__file__).resolve().parents[2]


def table(results: list[ProcessResult]) -> bytes:
    """The cohort tables as the command prints them (NaN as null, so equal tables compare equal)."""
    report = asdict(cohort_report([result_row(r) for r in results], n_boot=200))
    return orjson.dumps(report, option=orjson.OPT_SERIALIZE_NUMPY)


@pytest.fixture(scope="module")
def serial(splits: list[TaskSplit]) -> list[ProcessResult]:
    return score_splits(splits, "paper")


@pytest.mark.parametrize("name", ["processes", "ray_engine"])
def test_engines_score_exactly_as_serial(
    name: str, splits: list[TaskSplit], serial: list[ProcessResult], request: pytest.FixtureRequest
) -> None:
    engine: Engine = request.getfixturevalue(name)
    done: list[str] = []
    results = score_splits(
        splits, "paper", on_split=lambda s: done.append(s.task_id), engine=engine
    )
    assert [r.to_dict() for r in results] == [r.to_dict() for r in serial]
    assert table(results) == table(serial)
    assert sorted(done) == sorted(s.task_id for s in splits)


def test_a_failing_task_is_kept_apart(
    splits: list[TaskSplit], serial: list[ProcessResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FAIL_ON, "psf__requests-1724")
    with get_engine(FAILING) as engine:
        outcomes = score_tasks(splits, "paper", engine=engine)
    assert [o.ok for o in outcomes] == [True, False, True]
    assert str(outcomes[1].error) == "ValueError: injected failure for psf__requests-1724"
    kept = [r.to_dict() for o in outcomes for r in o.value or ()]
    assert kept == [r.to_dict() for r in serial if r.task_id != "psf__requests-1724"]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_cohort_command_is_the_same_on_processes(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("cohort", *FOLDERS, "--k", "3", "--boot", "100", "--json")
    code, serial_out, serial_err = run(capsys, *args)
    assert code == 0 and json.loads(serial_out)["n_runs"] > 60
    assert run(capsys, *args, "--engine", "processes:2") == (0, serial_out, serial_err)


def test_cohort_reports_a_failed_task_in_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FAIL_ON, "psf__requests-1724")
    monkeypatch.setenv("AGENTLENS_ENGINE", FAILING)
    code, out, err = run(capsys, "cohort", *FOLDERS, "--k", "3", "--boot", "100", "--json")
    assert code == 1 and json.loads(out)["n_runs"] == 35  # astropy's runs kept
    assert err.splitlines()[-2:] == [
        "failed: task psf__requests-1724: scoring failed: ValueError: injected failure for "
        "psf__requests-1724",
        "1 failed; 35 runs scored",
    ]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ref") / "ref.json"
    assert main(["reference", "build", FOLDERS[1], "-o", str(out)]) == 0
    return out


def test_score_command_on_processes_and_a_failed_run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, reference: Path
) -> None:
    args = ("score", FOLDERS[1], "--reference", str(reference), "--json")
    code, serial_out, serial_err = run(capsys, *args)
    assert code == 0 and len(serial_out.splitlines()) == 37
    # the reference's own donors are among the runs: `score` warns once for each (guard rail)
    donors = serial_err.splitlines()
    assert len(donors) == 5 and all("was one of the reference's donors" in w for w in donors)
    assert run(capsys, *args, "--engine", "processes:2") == (0, serial_out, serial_err)
    monkeypatch.setenv(FAIL_ON, BAD_RUN)
    code, out, err = run(capsys, *args, "--engine", FAILING)
    assert code == 1
    assert out.splitlines() == [x for x in serial_out.splitlines() if BAD_RUN not in x]
    path = Path(FOLDERS[1]) / f"{BAD_RUN}.json"
    assert [line for line in err.splitlines() if line not in donors] == [
        f"failed: {path} [agentlens-bench]: scoring failed: ValueError: injected failure for "
        f"{BAD_RUN}",
        "1 failed; 36 runs scored",
    ]


KILLED_COHORT = ["cohort", *FOLDERS, "--k", "3", "--no-tables"]


@pytest.fixture(scope="module")
def serial_rows(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The rows of the killed-worker cohort, run serially: once for both engines."""
    out = tmp_path_factory.mktemp("serial") / "serial.jsonl"
    assert main([*KILLED_COHORT, "--out", str(out)]) == 0
    return out.read_text().splitlines(keepends=True)


@pytest.mark.parametrize(
    ("engine", "death"),
    [
        (KILLING, r"worker process \d+ was killed by SIGKILL \(out of memory\?\)"),
        (RAY_KILLING, r"a Ray worker process died \(killed, out of memory, a crash\?\)"),
    ],
    ids=["processes", "ray"],
)
def test_a_killed_worker_costs_the_cohort_only_its_task(
    engine: str, death: str, serial_rows: list[str], tmp_path: Path
) -> None:
    """`agentlens cohort --out` on a pool of 2 (`processes:2`, or a local Ray of its own) where
    every unit of one task kills its worker (SIGKILL): that task fails in one line, the other
    task's rows are serial's, exit 1, nothing on stdout, no process left in the command's group
    (a Ray worker's death stopped the batch: exit 2, nothing written)."""
    if engine == RAY_KILLING:
        needed("ray")
    to_file = ["--out", str(tmp_path / "out.jsonl")]
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentlens", *KILLED_COHORT, *to_file, "--engine", engine],
        cwd=ROOT,
        env=os.environ
        | {FAIL_ON: KILLED, "RAY_ADDRESS": "", "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'src'}"},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    out, err, left = finish_in_group(proc, timeout=300)
    assert proc.returncode == 1 and left == [] and out == "", err
    lines = [x for x in err.splitlines() if x.strip()]  # rich leaves a blank line per bar
    assert re.fullmatch(
        rf"failed: task {KILLED}: scoring failed: WorkerLostError: {death} running it, twice",
        lines[0],
    ), err
    assert lines[1] == "1 failed; 35 runs scored" and "wrote 35 rows" in lines[2], err
    kept = [row for row in serial_rows if json.loads(row)["task_id"] != KILLED]
    assert (tmp_path / "out.jsonl").read_text() == "".join(kept)


def test_a_task_is_cut_into_pieces_only_for_more_than_one_worker() -> None:
    assert piece_size(271, 1) == 271  # serial: every task whole
    assert piece_size(271, 2) == 34 and piece_size(10, 8) == MIN_PIECE
    assert [len(p) for p in _cut(list(range(42)), 8)] == [7, 7, 7, 7, 7, 7]  # nearly equal
    assert [len(p) for p in _cut(list(range(9)), 4)] == [3, 3, 3]
    assert [i for piece in _cut(list(range(43)), 34) for i in piece] == list(range(43))


def test_one_large_task_is_spread_over_the_pool_and_scores_as_serial(
    runs: list[Trajectory], processes: Engine
) -> None:
    """A cohort of one task, the case pieces are for: both workers busy, same results."""
    one = [t for t in runs if t.task_id == "psf__requests-1724"]
    splits = split_cohort(one, "leave-one-out", k=3)
    assert len(splits) > 2 * piece_size(len(splits), processes.workers)  # cut in 3 or more
    outcomes = score_tasks(splits, "paper", engine=processes)
    assert len(outcomes) == 1 and outcomes[0].ok
    serial = score_splits(splits, "paper")
    assert [r.to_dict() for r in outcomes[0].value or ()] == [r.to_dict() for r in serial]


def test_a_task_cut_in_pieces_fails_once_as_a_whole(
    runs: list[Trajectory], monkeypatch: pytest.MonkeyPatch
) -> None:
    one = [t for t in runs if t.task_id == "psf__requests-1724"]
    splits = split_cohort(one, "leave-one-out", k=3)
    assert len(splits) > piece_size(len(splits), 2)  # more than one piece
    monkeypatch.setenv(FAIL_ON, "psf__requests-1724")
    with get_engine(FAILING) as engine:
        (outcome,) = score_tasks(splits, "paper", engine=engine)
    assert not outcome.ok and outcome.value is None
    assert str(outcome.error) == "ValueError: injected failure for psf__requests-1724"
