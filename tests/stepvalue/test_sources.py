from __future__ import annotations

from pathlib import Path

import pytest

from agentlens.errors import ConfigError
from agentlens.formats import read_path
from agentlens.stepvalue.schema import write_asv
from agentlens.stepvalue.sources import build_problems
from tests.conftest import BENCH

TASK = BENCH / "trajectories" / "psf__requests-1724"


@pytest.fixture(scope="module")
def runs():
    return [read_path(p)[0] for p in sorted(TASK.glob("*.json"))]


def test_fault_localisation_pools_the_runs_of_the_same_task(runs) -> None:
    target = [r for r in runs if r.outcome.status == "passed"][:1]
    alone = build_problems(target, "outcome", max_steps=2)
    (problem,) = build_problems(target, "fault-localisation", runs=runs, max_steps=2)
    assert problem.gold_id == "/requests/models.py"
    assert len(problem.transitions) == len(alone[0].transitions) == 2
    with pytest.raises(ConfigError, match="no passing run"):  # one run that modifies nothing
        build_problems([r for r in runs if r.outcome.status == "failed"][:1], "fault-localisation")


def test_explicit_file_is_truncated_by_max_steps(runs, tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    write_asv(build_problems(runs[:2], "outcome", max_steps=4), path)
    problems = build_problems([], str(path), max_steps=3)
    assert [len(p.transitions) for p in problems] == [3, 3]


def test_candidate_sources_need_their_inputs(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="needs trajectory files"):
        build_problems([], "outcome")
    with pytest.raises(ConfigError, match="neither"):
        build_problems([], str(tmp_path / "missing.jsonl"))


def test_an_unreadable_reference_names_its_file(runs, tmp_path: Path) -> None:
    broken = tmp_path / "ref.json"
    broken.write_text('{"format": "agentlens.reference/1", "nodes": [')
    for path in (broken, tmp_path / "absent.json"):
        with pytest.raises(ConfigError, match=path.name):
            build_problems(runs[:1], "fault-localisation", runs=runs, reference=str(path))
