"""One profile per view: a trajectory opened from a score run is labelled with the labeler of the
run's OWN profile (an sdk-compat run with the sdk-compat labeler), not the default; `?profile=`
still overrides; without a run the default profile labels it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from agentlens.cli import main
from agentlens.process.labeler import label_trajectory
from agentlens.store import open_store
from agentlens.viewer import create_app
from tests.viewer.conftest import SCORED, TASK


@pytest.fixture(scope="module")
def sdk_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    folder = tmp_path_factory.mktemp("sdk-view")
    path, reference = folder / "store.db", folder / "reference.json"
    build = ["reference", "build", str(TASK), "--profile", "sdk-compat", "-o", str(reference)]
    assert main(build) == 0
    assert (
        main(["score", *map(str, SCORED), "--reference", str(reference), "--store", str(path)]) == 0
    )
    with open_store(str(path)) as store:
        (run,) = store.runs(kind="score")
    assert run.settings["profile"] == "sdk-compat"
    yield path, run.id


def test_a_trajectory_opened_from_an_sdk_compat_run_has_its_labels(
    sdk_store: tuple[Path, str],
) -> None:
    path, run_id = sdk_store
    with open_store(str(path)) as store:
        records = store.records(run_id, bodies=False)
        traj = store.trajectory(records[0].trajectory)
    sdk, default = label_trajectory(traj, "sdk-compat"), label_trajectory(traj, "calibrated")
    assert sdk != default  # the two labelers disagree on this real run, so the test can fail
    digest = records[0].trajectory
    with TestClient(create_app(str(path)), base_url="http://127.0.0.1") as client:
        opened = client.get(f"/api/trajectories/{digest}?run={run_id}").json()
        phases = client.get(f"/api/trajectories/{digest}/phases?run={run_id}").json()
        plain = client.get(f"/api/trajectories/{digest}").json()
        chosen = client.get(f"/api/trajectories/{digest}?run={run_id}&profile=paper").json()
    assert opened["profile"] == phases["profile"] == "sdk-compat"
    assert [s["stage"] for s in opened["steps"]] == sdk
    assert phases["steps"] == [{"index": i, "stage": s} for i, s in enumerate(sdk) if s]
    assert plain["profile"] == "calibrated" and [s["stage"] for s in plain["steps"]] == default
    assert chosen["profile"] == "paper"
