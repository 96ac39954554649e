"""`qi --reviews R --verify V` scores one set of runs: a verify result that names a trajectory the
reviews do not hold is another run's, and never mixes into the formal pass rate. The verify files
come from the real `agentlens verify --trajectory` on the demo repo, before and after its fix; the
trajectories and the reviewed one are real files of the bench."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentlens.cli import main
from agentlens.demo.tiny_repo import DEMO_SCENARIO, apply_fix, create_repo
from agentlens.jsonio import dump
from agentlens.reviews import DIMENSIONS
from agentlens.reviews.documents import reviews_document
from agentlens.reviews.judge.judge import DimensionReview, TrajectoryReview
from agentlens.reviews.judge.parse import parse_review
from tests.conftest import BENCH
from tests.reviews.test_documents import ANSWER, PASS_RUN

OTHER_RUN = (
    BENCH / "trajectories" / "pallets__flask-5014"
    / "pallets__flask-5014-logs-gemini-2.5-pro-fail-24943628310_pta.json"
)  # fmt: skip


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """reviews.json of PASS_RUN; verify of OTHER_RUN before the fix (fails), verify of PASS_RUN
    after it (passes)."""
    root = tmp_path_factory.mktemp("match")
    repo = create_repo(root / "calc")
    scenario = root / "scenario.json"
    scenario.write_text(json.dumps(DEMO_SCENARIO))

    def verify(trajectory: Path, out: Path) -> Path:
        main(["verify", str(scenario), "--repo", str(repo), "--trajectory", str(trajectory),
              "--out", str(out)])  # fmt: skip
        return out

    other = verify(OTHER_RUN, root / "other-verify.json")
    apply_fix(repo)
    same = verify(PASS_RUN, root / "verify.json")
    parsed = parse_review(ANSWER, 5)
    dims = {
        d: DimensionReview(d, parsed.score, parsed.unscored_reason, parsed, ANSWER, 90, {})
        for d in DIMENSIONS
    }
    review = TrajectoryReview(PASS_RUN.stem, "psf__requests-1724", 5, 900, 900, dims)
    dump(reviews_document("judge", [review]), root / "reviews.json")
    return {"reviews": root / "reviews.json", "same": same, "other": other}


def qi(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["qi", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err.strip()


def test_another_runs_verify_file_is_refused(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = qi(capsys, "--reviews", str(files["reviews"]), "--verify", str(files["other"]))
    assert code == 2 and out == "", err
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err
    assert str(files["other"]) in err and str(files["reviews"]) in err
    assert OTHER_RUN.stem in err and PASS_RUN.stem in err  # what does not match, both sides
    assert "internal error" not in err


def test_only_the_reviewed_runs_verify_results_count(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--reviews", str(files["reviews"]), "--json"]
    code, out, err = qi(
        capsys, *args, "--verify", str(files["same"]), "--verify", str(files["other"])
    )
    doc = json.loads(out)
    # the other run failed its checks: counted, Formal would be (1 + 0) / 2 = 0.5
    assert code == 0 and doc["components"]["Formal"] == 1.0
    same = json.loads(files["same"].read_text())["results"][0]["verifier_results"]
    assert doc["verifiers_passed"]["total"] == len(same)  # the side metric leaves it out too
    warning = "1 of 2 verify results name a trajectory not in"
    assert err.count("warning:") == 1 and warning in err and str(files["reviews"]) in err, err
    assert warning in " ".join(doc["warnings"])
    assert f"in {files['other']})" in err and str(files["same"]) not in err  # where it is


def test_the_same_runs_verify_file_counts_silently(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = qi(capsys, "--reviews", str(files["reviews"]), "--verify", str(files["same"]))
    assert code == 0 and "warning" not in err, err
    assert out.startswith("Quality Index ")


def test_a_verify_result_naming_no_trajectory_is_said_to_be_unchecked(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(files["same"].read_text())
    doc["results"][0]["trajectory_id"] = None  # `agentlens verify` without --trajectory
    unnamed = tmp_path / "unnamed.json"
    unnamed.write_text(json.dumps(doc))
    code, _, err = qi(capsys, "--reviews", str(files["reviews"]), "--verify", str(unnamed))
    assert code == 0 and err.count("warning:") == 1, err
    assert "1 verify result names no trajectory" in err and "--trajectory" in err, err
