"""`compare --process` on real AgentLens-Bench dev traces: references from both runs' passing runs
pooled, every run scored leave-one-out. Expected counts come from the file names (`-pass-` /
`-fail-`); expected scores are recomputed with `agentlens.process`'s own public functions."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from agentlens.cli import main
from agentlens.formats.stream import read_paths
from agentlens.process.reference import build_reference
from agentlens.process.score import score_trajectory
from agentlens.reviews.process_evidence import leave_one_out_scores, metrics, run_key
from tests.conftest import BENCH

TRAJS = BENCH / "trajectories"
TASKS = "[ap][sy][dlt]*"  # astropy (1 passing run in the pool), pydata (8), pylint (2)
MODEL_A, MODEL_B = "gpt-5.2-codex", "sonnet-4.5"


def pattern(model: str) -> str:
    return f"{TASKS}/*-logs-{model}-*.json"


def files(*models: str) -> list[Path]:
    return sorted(f for m in models for f in TRAJS.glob(pattern(m)))


def expected_scored(run: list[Path], pool: list[Path]) -> list[str]:
    """Leave-one-out with ≥ 2 donors: a failing run needs ≥ 2 passing runs in the pool of its
    task, a passing run ≥ 3 (itself excluded)."""
    passing = Counter(f.parent.name for f in set(pool) if "-pass-" in f.name)
    need = {True: 3, False: 2}
    return sorted(f.stem for f in run if passing[f.parent.name] >= need["-pass-" in f.name])


@pytest.fixture(scope="module")
def runs():
    return read_paths(files(MODEL_A)).trajectories, read_paths(files(MODEL_B)).trajectories


def compare_json(capsys, *args: str) -> dict:
    capsys.readouterr()
    main(["compare", *args, "--process", "--json"])
    return json.loads(capsys.readouterr().out)


def test_self_compare_gives_identical_samples(capsys) -> None:
    run = str(TRAJS / pattern(MODEL_A))
    doc = compare_json(capsys, run, run)
    r1, r2 = doc["process"]["runs"]["run_1"], doc["process"]["runs"]["run_2"]
    assert r1["samples"] == r2["samples"]
    expected = expected_scored(files(MODEL_A), files(MODEL_A))
    assert r1["scored"] == r2["scored"] == len(expected) > 0
    assert doc["process"]["tasks_skipped"] == ["astropy__astropy-13236", "pylint-dev__pylint-4970"]
    checks = {c["name"]: c for c in doc["checks"]}
    assert not checks["process: waste severity"]["warning"]
    assert "leave-one-out" in checks["process: references"]["reason"]


def test_scores_do_not_depend_on_which_run_is_the_anchor(runs) -> None:
    a, b = runs
    ab, ba = leave_one_out_scores(a + b), leave_one_out_scores(b + a)
    assert metrics(ab.of(a)) == metrics(ba.of(a)) and metrics(ab.of(b)) == metrics(ba.of(b))
    pool = files(MODEL_A, MODEL_B)
    for run, paths in ((a, files(MODEL_A)), (b, files(MODEL_B))):
        scored = sorted(r.trajectory_id for r in ab.of(run))
        assert scored == expected_scored(paths, pool)
        assert sorted(ab.unscored(run)) == sorted(set(f.stem for f in paths) - set(scored))
    assert ab.tasks_skipped == ["astropy__astropy-13236"]  # pylint's failing runs are scored


def test_passing_run_is_scored_without_itself(runs) -> None:
    a, b = runs
    scores = leave_one_out_scores(a + b)
    task = "pydata__xarray-3993"
    passing = sorted(
        (t for t in a + b if t.task_id == task and t.outcome.status == "passed"),
        key=lambda t: Path(t.source.path).name,
    )
    assert len(passing) == sum(
        "-pass-" in f.name for f in files(MODEL_A, MODEL_B) if task in f.name
    )
    in_sample_ref = build_reference(passing)
    differs = 0
    for run in passing:
        loo = score_trajectory(run, build_reference([t for t in passing if t is not run]), "paper")
        got = scores.results[run_key(run)]
        assert (got.score, got.stages.percent("V"), got.waste_severity) == (
            loo.score,
            loo.stages.percent("V"),
            loo.waste_severity,
        )
        differs += score_trajectory(run, in_sample_ref, "paper").score != loo.score
    assert differs >= 1  # in-sample scoring flatters at least one donor


def test_fixed_reference_dir(tmp_path: Path, capsys) -> None:
    task = "pydata__xarray-3993"
    donors = [str(f) for f in files(MODEL_A, MODEL_B) if task in f.name and "-pass-" in f.name]
    refs = tmp_path / "refs"
    refs.mkdir()
    main(["reference", "build", *donors, "-o", str(refs / f"{task}.json"), "--k", "0"])
    doc = compare_json(
        capsys,
        str(TRAJS / pattern(MODEL_A)),
        str(TRAJS / pattern(MODEL_B)),
        "--reference",
        str(refs),
    )
    process = doc["process"]
    assert process["method"] == "fixed per-task references"
    assert process["tasks_skipped"] == ["astropy__astropy-13236", "pylint-dev__pylint-4970"]
    for side, model in (("run_1", MODEL_A), ("run_2", MODEL_B)):
        runs = [f for f in files(model) if task in f.name]
        # every passing run is a donor (k = 0): scored against itself, it is left out, as the
        # report leaves it out of its figures; it was counted in the Lucky rate and coverage
        donor_ids = sorted(f.stem for f in runs if "-pass-" in f.name)
        assert process["runs"][side]["scored"] == len(runs) - len(donor_ids)
        assert sorted(process["runs"][side]["in_sample_ids"]) == donor_ids
        assert not any(task in i for i in process["runs"][side]["unscored_ids"])
        assert process["runs"][side]["samples"]["lucky"] == []  # only failing runs are left
    assert process["in_sample"] == len(donors)
    (note,) = [c["reason"] for c in doc["checks"] if c["name"] == "process: references"]
    assert f"{len(donors)} runs left out as donors of their own reference (in-sample)" in note
