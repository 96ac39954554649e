"""Testing comparisons of spec §11.2 through `agentlens compare`, from real `agentlens verify`
runs of the demo repository (a real pytest run before and after the fix). Expected values come
from the verify JSON here and scipy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy import stats

from agentlens.cli import main
from agentlens.demo.tiny_repo import DEMO_SCENARIO, apply_fix, create_repo
from tests.conftest import BENCH

TASK = BENCH / "trajectories" / "psf__requests-1724"


def verify(tmp_path: Path, repo: Path, name: str) -> Path:
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps(DEMO_SCENARIO))
    out = tmp_path / f"{name}.json"
    main(["verify", str(scenario), "--repo", str(repo), "--out", str(out)])
    return out


def passed_fraction(path: Path) -> float:
    (result,) = json.loads(path.read_text())["results"]
    (run,) = [v for v in result["verifier_results"] if v["type"] == "RunTestsVerifier"]
    return run["metrics"]["passed"] / run["metrics"]["tests"]


def test_testing_rows_compare_the_anchor_with_the_new_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = create_repo(tmp_path / "calc")
    before = verify(tmp_path, repo, "before")
    apply_fix(repo)
    after = verify(tmp_path, repo, "after")
    f1, f2 = passed_fraction(before), passed_fraction(after)
    assert f1 < f2 == 1.0  # the failing suite passes after the fix
    runs = str(TASK / "*gpt-4.1-*")
    capsys.readouterr()
    main(["compare", runs, runs, "--a-verify", str(before), "--b-verify", str(after), "--json"])
    checks = {c["name"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    runnable = checks["testing: runnable test runs"]
    fisher_p = round(stats.fisher_exact([[1, 0], [1, 0]])[1], 5)
    assert (runnable["v1"], runnable["v2"], runnable["p_value"]) == (1, 1, fisher_p)
    passed = checks["testing: passed-tests fraction"]
    assert (passed["v1"], passed["v2"]) == (pytest.approx(f1), 1.0)
    ratio = (1.0 + 1e-9) / (f1 + 1e-9)
    assert passed["ratio"] == round(ratio, 4)
    assert passed["warning"] == (not 0.9 <= ratio <= 1.2)
    assert passed["alert"] == (not 0.8 <= ratio <= 1.3)
    coverage = checks["testing: coverage"]  # the demo measures no coverage: 0 on both sides
    assert (coverage["v1"], coverage["v2"], coverage["warning"]) == (0.0, 0.0, False)
    assert checks["testing: non-null coverage"]["v1"] is None
