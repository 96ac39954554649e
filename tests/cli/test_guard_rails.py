"""`score` warns about a run of another task or a donor; `cohort` says its rule and which tasks
it could not score, with the runs it found."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import BENCH, DATA

TRAJ = BENCH / "trajectories"
REQUESTS = TRAJ / "psf__requests-1724"
OTHER = TRAJ / "pallets__flask-5014"


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from agentlens.cli import main

    out = tmp_path_factory.mktemp("ref") / "ref.json"
    args = ["reference", "build", str(REQUESTS), "-o", str(out), "--profile", "sdk-compat"]
    assert main(args) == 0
    return out


def test_score_warns_about_another_task_and_a_donor(
    reference: Path, run_cli: Callable[..., object]
) -> None:
    doc = json.loads(reference.read_bytes())
    assert doc["tasks"] == [REQUESTS.name]
    donor = REQUESTS / f"{doc['donors'][0]}.json"
    fresh = next(p for p in sorted(REQUESTS.glob("*-fail-*.json")))
    stranger = next(p for p in sorted(OTHER.glob("*-pass-*.json")))
    result = run_cli("score", "--reference", str(reference), str(donor), str(fresh), str(stranger))
    assert result.code == 0  # type: ignore[attr-defined]
    err = " ".join(result.err.split())  # type: ignore[attr-defined]
    assert f"{donor.stem}: was one of the reference's donors" in err
    assert "(in-sample: its score flatters it)" in err  # a donor may score low: 19.3, lucky
    assert f"its task '{OTHER.name}' is not the reference's" in err
    assert fresh.stem not in err  # a run of the task that was no donor: no warning


def test_cohort_names_the_tasks_it_cannot_score(
    tmp_path: Path, run_cli: Callable[..., object]
) -> None:
    astropy = TRAJ / "astropy__astropy-13236"
    for path in [*astropy.glob("*-pass-*.json"), *sorted(astropy.glob("*-fail-*.json"))[:3]]:
        shutil.copy(path, tmp_path)
    two = sorted(OTHER.glob("*-pass-*.json"))[:2]  # two passing runs, no failing one
    for path in two:
        shutil.copy(path, tmp_path)
    result = run_cli(
        "cohort", "--protocol", "leave-one-out", "--profile", "sdk-compat", str(tmp_path)
    )
    err = " ".join(result.err.split())  # type: ignore[attr-defined]
    assert "two OTHER passing runs" in err
    assert f"not scored: {OTHER.name}: 2 passing, 0 failing, 0 unknown (2 of 2 runs" in err


def test_cohort_with_nothing_to_score_says_the_rule_and_what_it_found(
    tmp_path: Path, run_cli: Callable[..., object]
) -> None:
    for path in sorted(OTHER.glob("*-pass-*.json"))[:2]:
        shutil.copy(path, tmp_path)
    result = run_cli("cohort", "--protocol", "leave-one-out", str(tmp_path))
    assert result.code == 0  # type: ignore[attr-defined]
    err = " ".join(result.err.split())  # type: ignore[attr-defined]
    assert "each scored run needs two OTHER passing runs of its task" in err
    assert f"not scored: {OTHER.name}: 2 passing, 0 failing" in err
    assert "0 runs scored" in err
    strict = run_cli("cohort", "--protocol", "leave-one-out", "--strict", str(tmp_path))
    assert strict.code == 2  # type: ignore[attr-defined]
    err = " ".join(strict.err.split())  # type: ignore[attr-defined]
    assert "no task has enough passing runs" in err and f"{OTHER.name}: 2 passing" in err


def test_cohort_of_one_run_per_task_scores_none_and_exits_0(
    run_cli: Callable[..., object],
) -> None:
    result = run_cli("cohort", "--json", "--boot", "10", str(DATA / "mini-swe-agent-swebv"))
    assert result.code == 0  # type: ignore[attr-defined]
    tasks = {p.name for p in (DATA / "mini-swe-agent-swebv" / "trajs").iterdir()}
    err = result.err  # type: ignore[attr-defined]
    named = {
        line.split(":")[1].strip() for line in err.splitlines() if line.startswith("not scored:")
    }
    assert named == tasks and "0 runs scored" in err
    assert json.loads(result.out)["n_runs"] == 0  # type: ignore[attr-defined]


def test_agentlens_bench_names_only_tasks_short_of_donors_not_their_donors(
    run_cli: Callable[..., object],
) -> None:
    astropy = TRAJ / "astropy__astropy-13236"  # 3 passing runs: fewer than the 5 donors
    result = run_cli(
        "cohort", "--protocol", "agentlens-bench", "--no-tables", str(REQUESTS), str(astropy)
    )
    assert result.code == 0  # type: ignore[attr-defined]
    err = " ".join(result.err.split())  # type: ignore[attr-defined]
    assert f"not scored: {astropy.name}: 3 passing" in err
    assert f"not scored: {REQUESTS.name}" not in err  # its 5 donors are not "not scored"


def test_cohort_of_files_that_all_fail_prints_no_empty_tables(
    tmp_path: Path, run_cli: Callable[..., object]
) -> None:
    """Every input failed: its `failed:` line and exit 1, not five tables of nothing."""
    broken = tmp_path / "run.json"
    broken.write_bytes(next(OTHER.glob("*-pass-*.json")).read_bytes()[:400])
    result = run_cli("cohort", str(broken))
    assert result.code == 1  # type: ignore[attr-defined]
    assert result.out == ""  # type: ignore[attr-defined]
    err = " ".join(result.err.split())  # type: ignore[attr-defined]
    assert f"failed: {broken}" in err
    # no `not scored:` line is printed here, so none is pointed to
    assert "0 runs scored (see the `failed:` lines above)" in err and "not scored" not in err


def _donor_and_fresh(reference: Path) -> tuple[Path, Path]:
    """A donor of `reference` and a run of its task that was none."""
    donor = REQUESTS / f"{json.loads(reference.read_bytes())['donors'][0]}.json"
    return donor, next(p for p in sorted(REQUESTS.glob("*-fail-*.json")))


def test_score_json_and_lines_mark_a_donor_in_sample(
    reference: Path, run_cli: Callable[..., object]
) -> None:
    """A donor is scored against a graph built from itself: the warning scrolled away and
    nothing in what `score` printed or kept said so."""
    donor, fresh = _donor_and_fresh(reference)
    result = run_cli("score", "--reference", str(reference), str(donor), str(fresh), "--json")
    rows = {d["trajectory_id"]: d for d in map(json.loads, result.out.splitlines())}  # type: ignore[attr-defined]
    assert rows[donor.stem]["in_sample"] is True
    assert rows[fresh.stem]["in_sample"] is False
    assert "in_sample" not in rows[donor.stem]["annotation"]  # the release's 40 columns
    lines = run_cli("score", "--reference", str(reference), str(donor), str(fresh)).out  # type: ignore[attr-defined]
    assert f"{donor.stem} (in-sample)" in lines
    assert f"{fresh.stem} (in-sample)" not in lines


def test_score_csv_keeps_the_release_columns_and_says_donors_go_unmarked(
    reference: Path, tmp_path: Path, run_cli: Callable[..., object]
) -> None:
    from agentlens.process.result import ANNOTATION_COLUMNS

    donor, fresh = _donor_and_fresh(reference)
    out = tmp_path / "scores.csv"
    result = run_cli(
        "score", "--reference", str(reference), str(donor), str(fresh), "--csv", str(out)
    )
    assert out.read_text().splitlines()[0].split(",") == list(ANNOTATION_COLUMNS)
    err = " ".join(result.err.split())  # type: ignore[attr-defined]
    assert f"{out}: 1 row scored in-sample (the donors named above), unmarked" in err
    clean = run_cli("score", "--reference", str(reference), str(fresh), "--csv", str(out))
    assert "in-sample" not in clean.err  # type: ignore[attr-defined]


def test_score_store_keeps_the_in_sample_mark(
    reference: Path, tmp_path: Path, run_cli: Callable[..., object]
) -> None:
    from agentlens.store import open_store

    donor, fresh = _donor_and_fresh(reference)
    url = str(tmp_path / "results.db")
    run_cli("score", "--reference", str(reference), str(donor), str(fresh), "--store", url)
    with open_store(url) as store:
        records = store.records(store.runs()[0].id)
    assert {r.trajectory_id: r.body["in_sample"] for r in records} == {
        donor.stem: True,
        fresh.stem: False,
    }
