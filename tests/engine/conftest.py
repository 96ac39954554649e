from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentlens.engine import get_engine
from agentlens.formats.stream import read_paths
from agentlens.process.protocols import TaskSplit, split_cohort
from agentlens.seams import Engine
from agentlens.trajectory import Trajectory
from tests.conftest import BENCH

TASKS = ("astropy__astropy-13236", "psf__requests-1724", "pylint-dev__pylint-4970")


@pytest.fixture(scope="session")
def runs() -> list[Trajectory]:
    trajs = read_paths([str(BENCH / "trajectories" / t) for t in TASKS]).trajectories
    assert {t.task_id for t in trajs} == set(TASKS)
    return trajs


@pytest.fixture(scope="session")
def splits(runs: list[Trajectory]) -> list[TaskSplit]:
    """Leave-one-out with at most 3 donors: 3 tasks, dozens of references, a few seconds serial."""
    return split_cohort(runs, "leave-one-out", k=3)


@pytest.fixture(scope="session")
def processes() -> Iterator[Engine]:
    with get_engine("processes:2") as engine:
        yield engine
