"""Values JSON cannot carry: an infinite metric (a step's surprise with a zero probability)."""

from __future__ import annotations

import math
from pathlib import Path

from starlette.testclient import TestClient

from agentlens.formats.stream import read_paths
from agentlens.store import Metric, Record, Run, digest, open_store
from agentlens.viewer import create_app
from tests.viewer.conftest import SCORED


def test_an_infinite_metric_is_sent_as_null_not_a_server_error(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    (t,) = read_paths([str(SCORED[0])]).trajectories
    metrics = [
        Metric(name="surprise", value=math.inf),
        Metric(name="text:surprise", value=-math.inf, step=1),
        Metric(name="steps", value=float(len(t.steps))),
    ]
    record = Record(trajectory=digest(t), trajectory_id=t.id, metrics=metrics)
    with open_store(str(path)) as store:
        run = store.save(Run(kind="stepvalue", scorer="x/1"), [t], [record])
    with TestClient(create_app(str(path)), base_url="http://127.0.0.1") as client:
        table = client.get(f"/api/runs/{run}")
        one = client.get(f"/api/runs/{run}/records/0")
    assert table.status_code == 200, table.text
    assert [m["value"] for m in table.json()["records"][0]["metrics"]] == [None, len(t.steps)]
    assert one.status_code == 200, one.text
    assert [m["value"] for m in one.json()["metrics"]] == [None, None, len(t.steps)]
    assert table.headers["content-type"] == "application/json"
