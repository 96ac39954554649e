"""`compare A B --a-verify V --a-reviews R` scores run A by V and R, so they must be about A's
trajectories: another run's verify results (or reviews) never mix into the formal check or the
QI delta, in the words and exit codes of `qi` (`test_qi_runs_match.py`, whose real verify files
and reviews these are)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentlens.cli import main
from tests.reviews.test_documents import PASS_RUN
from tests.reviews.test_qi_runs_match import OTHER_RUN, files

__all__ = ["files"]  # the module fixture: real verify files of both runs, reviews of PASS_RUN


def compare(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["compare", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err.strip()


def test_another_runs_verify_file_is_refused(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    run = str(PASS_RUN)
    args = [run, run, "--a-verify", str(files["other"]), "--b-verify", str(files["same"])]
    code, out, err = compare(capsys, *args)
    assert code == 2 and out == "", err
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err
    assert str(files["other"]) in err and run in err and "are about different runs" in err
    assert OTHER_RUN.stem in err and PASS_RUN.stem in err  # what does not match, both sides
    assert "internal error" not in err


def test_only_the_runs_own_verify_results_count(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    run, same, other = str(PASS_RUN), str(files["same"]), str(files["other"])
    args = [run, run, "--a-verify", same, "--a-verify", other, "--b-verify", same, "--json"]
    code, out, err = compare(capsys, *args)
    doc = json.loads(out)
    formal = {c["name"]: c for c in doc["checks"]}["formal verification"]
    # the other run failed its checks: counted, run 1 would be 1/2 passed
    assert formal["reason"].startswith("1/1 vs 1/1 passed"), formal
    assert code == doc["exit_code"]
    warning = f"1 of 2 verify results name a trajectory not in {run}"
    assert err.count("warning:") == 1 and warning in err, err
    assert f"in {other})" in err and "left out of the formal and testing checks" in err, err


def test_reviews_of_another_run_are_refused(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    run, reviews = str(OTHER_RUN), str(files["reviews"])
    code, out, err = compare(capsys, run, run, "--a-reviews", reviews, "--b-reviews", reviews)
    assert code == 2 and out == "", err
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err
    assert reviews in err and run in err and "the reviews name 1 trajectory" in err, err


def test_the_runs_own_files_compare_silently(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    run, same, reviews = str(PASS_RUN), str(files["same"]), str(files["reviews"])
    args = ["--a-verify", same, "--b-verify", same, "--a-reviews", reviews, "--b-reviews", reviews]
    _, out, err = compare(capsys, run, run, *args, "--json")
    qi = {c["name"]: c for c in json.loads(out)["checks"]}["quality index"]
    assert "warning" not in err and qi["v1"] == qi["v2"] is not None, err


def test_the_qi_counts_the_verify_results_of_the_reviewed_runs(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run of two trajectories, both verified, one reviewed: the QI's formal rate is over the
    reviewed one, as `qi --reviews --verify` counts it."""
    run = tmp_path / "run"
    run.mkdir()
    for trajectory in (PASS_RUN, OTHER_RUN):
        (run / trajectory.name).symlink_to(trajectory)
    verify = ["--a-verify", str(files["same"]), "--a-verify", str(files["other"])]
    verify += ["--b-verify", str(files["same"]), "--b-verify", str(files["other"])]
    reviews = ["--a-reviews", str(files["reviews"]), "--b-reviews", str(files["reviews"])]
    _, out, err = compare(capsys, str(run), str(run), *verify, *reviews, "--json")
    checks = {c["name"]: c for c in json.loads(out)["checks"]}
    assert checks["formal verification"]["reason"].startswith("1/2 vs 1/2 passed")
    # formal 1.0 and every judge mean 1 (score 5 of 5): 100; with the other run counted, 91.67
    assert checks["quality index"]["v1"] == 100.0, checks["quality index"]
    warning = f"1 of 2 verify results name a trajectory not in {files['reviews']}"
    assert err.count(warning) == 2 and "left out of the QI's formal pass rate" in err, err
    reviewed = "1 of the 1 trajectory reviewed has a verify result"
    assert reviewed in err and err.count("warning:") == 2, err  # one per run: the reviews are
    # about part of the run, and that is no mismatch
