"""No run lost to another run's step: a labeller or scorer that raises on ONE real run costs that
run only -- one `failed:` line naming run, step and reason, the other runs of its task scored,
exit code 1 (some inputs failed)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from agentlens.cli import main
from agentlens.formats.stream import read_paths
from agentlens.process import labeler
from agentlens.trajectory import Step
from tests.conftest import BENCH

TASK = BENCH / "trajectories" / "psf__requests-1724"
BAD = TASK / "psf__requests-1724-logs-gpt-4o-fail-25018754982_pta.json"


def cohort(capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict, list[str]]:
    capsys.readouterr()
    code = main(
        ["cohort", str(TASK), "--protocol", "agentlens-bench", "--boot", "50", "--json", *extra]
    )
    out, err = capsys.readouterr()
    # the protocol's rule and the tasks it cannot score are notes, not failures (guard rails)
    notes = ("agentlens-bench:", "not scored:")
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith(notes)]
    return code, json.loads(out), lines


def flaky_paper_labeller() -> Callable[[Sequence[Step]], list]:
    """The `paper` labeller, raising on the tool steps of BAD only."""
    (bad,) = read_paths([BAD]).trajectories
    bad_steps = [s for s in bad.steps if s.kind == "tool"]
    real = labeler.label_steps_paper

    def flaky(steps: Sequence[Step], task: str | None = None) -> list:
        if list(steps) == bad_steps:
            raise IndexError("list index out of range")
        return real(steps, task)

    return flaky


def test_a_labeller_raising_on_one_run_costs_that_run_only(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, whole, err = cohort(capsys)
    assert code == 0 and err == []
    monkeypatch.setattr(labeler, "label_steps_paper", flaky_paper_labeller())
    code, kept, err = cohort(capsys)
    assert code == 1
    assert kept["n_runs"] == whole["n_runs"] - 1
    assert err == [
        f"failed: {BAD}: label failed: IndexError: list index out of range",
        f"1 failed; {whole['n_runs'] - 1} runs scored",
    ]


def test_a_scorer_raising_on_one_run_costs_that_run_only(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import agentlens.process.score as score

    real = score.score_trajectory

    def flaky(traj, *args, **kwargs):  # type: ignore[no-untyped-def]
        if Path(traj.source.path) == BAD:
            raise ValueError("injected")
        return real(traj, *args, **kwargs)

    monkeypatch.setattr(score, "score_trajectory", flaky)
    code, kept, err = cohort(capsys, "--profile", "paper")
    assert code == 1 and kept["n_runs"] > 0
    assert err[0] == f"failed: {BAD}: score failed: ValueError: injected"


def test_score_command_loses_only_the_run_whose_labeller_raised(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ref = tmp_path / "ref.json"
    assert main(["reference", "build", str(TASK), "-o", str(ref)]) == 0
    monkeypatch.setattr(labeler, "label_steps_paper", flaky_paper_labeller())
    capsys.readouterr()
    code = main(["score", str(TASK), "--reference", str(ref), "--json"])
    out, err = capsys.readouterr()
    n_runs = len(list(TASK.glob("*.json")))
    assert code == 1 and len(out.splitlines()) == n_runs - 1
    donors = "was one of the reference's donors"  # the guard rail's warning, one per donor
    assert [line for line in err.splitlines() if donors not in line] == [
        f"failed: {BAD}: label failed: IndexError: list index out of range",
        f"1 failed; {n_runs - 1} runs scored",
    ]
