"""The viewer's JSON API over a real store, checked against what the store and the labeler say."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from agentlens.process.labeler import label_trajectory
from agentlens.store import SqlStore
from agentlens.viewer import create_app
from agentlens.viewer.app import CSP
from agentlens.viewer.payload import PREVIEW_CHARS
from tests.viewer.conftest import HOSTILE, Built


@pytest.fixture
def client(built: Built) -> Iterator[TestClient]:
    with TestClient(create_app(str(built.path)), base_url="http://127.0.0.1") as opened:
        yield opened


def get(client: TestClient, path: str, status: int = 200) -> dict:
    response = client.get(path)
    assert response.status_code == status, response.text
    return response.json()


def test_runs_lists_every_run(client: TestClient, store: SqlStore) -> None:
    runs = get(client, "/api/runs")["runs"]
    assert [r["id"] for r in runs] == [r.id for r in store.runs()]
    assert {r["kind"] for r in runs} == {"import", "score"}
    assert next(r for r in runs if r["kind"] == "score")["n_records"] == 8


def test_run_gives_records_with_metrics_but_no_bodies(
    client: TestClient, store: SqlStore, built: Built
) -> None:
    found = get(client, f"/api/runs/{built.score_run[:12]}")
    records = store.records(built.score_run)
    assert found["run"]["id"] == built.score_run
    assert found["total"] == len(records) == 8
    assert [r["trajectory_id"] for r in found["records"]] == [r.trajectory_id for r in records]
    assert all("body" not in r for r in found["records"])
    first = found["records"][0]
    assert first["metrics"][0] == {
        "name": "score", "value": records[0].metric("score").value,  # type: ignore[union-attr]
        "label": records[0].metric("score").label,  # type: ignore[union-attr]
        "reason": records[0].metric("score").reason,  # type: ignore[union-attr]
    }  # fmt: skip
    assert found["metric_names"][:2] == ["score", "tier"]


def test_run_records_say_which_are_in_sample(
    client: TestClient, store: SqlStore, built: Built
) -> None:
    """A donor of the reference it was scored against is marked in each row, bodies aside."""
    found = get(client, f"/api/runs/{built.score_run}")["records"]
    expected = [r.body["in_sample"] for r in store.records(built.score_run)]
    assert [r["in_sample"] for r in found] == expected
    assert 0 < sum(expected) < len(expected)  # the conftest's runs include one donor


def test_run_records_are_paged(client: TestClient, store: SqlStore, built: Built) -> None:
    page = get(client, f"/api/runs/{built.score_run}?offset=3&limit=2")
    expected = [r.trajectory_id for r in store.records(built.score_run)[3:5]]
    assert [r["trajectory_id"] for r in page["records"]] == expected
    assert [r["position"] for r in page["records"]] == [3, 4]
    assert page["total"] == 8


def test_record_gives_its_body(client: TestClient, store: SqlStore, built: Built) -> None:
    found = get(client, f"/api/runs/{built.score_run}/records/2")
    record = store.records(built.score_run)[2]
    assert found["body"] == record.body
    assert found["body"]["score"] == found["metrics"][0]["value"]
    assert found["trajectory"] == record.trajectory


def test_a_run_and_a_trajectory_give_the_runs_record_of_it(
    client: TestClient, store: SqlStore, built: Built
) -> None:
    records = store.records(built.score_run)
    found = get(client, f"/api/runs/{built.score_run}/trajectories/{records[3].trajectory}")
    first = next(i for i, r in enumerate(records) if r.trajectory == records[3].trajectory)
    assert (found["position"], found["body"]) == (first, records[first].body)
    other = next(t["digest"] for t in store.trajectories() if t["digest"] not in
                 {r.trajectory for r in records})  # fmt: skip
    missing = client.get(f"/api/runs/{built.score_run}/trajectories/{other}")
    assert missing.status_code == 404
    assert missing.json()["error"] == (
        f"run {built.score_run[:12]} has no record of trajectory {other[:12]}"
    )


def test_trajectories_filter_by_task_model_outcome(client: TestClient, store: SqlStore) -> None:
    rows = store.trajectories()
    listed = get(client, "/api/trajectories")
    assert listed["total"] == len(rows) == 11
    assert {r["digest"] for r in listed["trajectories"]} == {r["digest"] for r in rows}
    for key, param in (("model", "model"), ("outcome", "outcome"), ("task_id", "task")):
        value = rows[0][key]
        found = get(client, f"/api/trajectories?{param}={value}")
        assert found["total"] == sum(1 for r in rows if r[key] == value)
    assert listed["facets"]["outcome"] == sorted({r["outcome"] for r in rows})


def test_trajectory_has_every_step_and_its_phase(
    client: TestClient, store: SqlStore, built: Built
) -> None:
    found = get(client, f"/api/trajectories/{built.hundred}")
    trajectory = store.trajectory(built.hundred)
    labels = label_trajectory(trajectory, "paper")
    assert len(found["steps"]) == len(trajectory.steps) == 101
    assert [s["stage"] for s in found["steps"]] == labels
    assert found["phases"] == dict(Counter(s for s in labels if s))
    assert found["totals"]["tool_steps"] == len(trajectory.tool_steps)
    assert found["totals"]["prompt_tokens"] == trajectory.usage_total().prompt_tokens
    assert "raw" not in found["steps"][1]


def test_phases_follow_the_chosen_profile(
    client: TestClient, store: SqlStore, built: Built
) -> None:
    trajectory = store.trajectory(built.hundred)
    sdk = label_trajectory(trajectory, "sdk-compat")
    found = get(client, f"/api/trajectories/{built.hundred}/phases?profile=sdk-compat")
    assert found["steps"] == [{"index": i, "stage": s} for i, s in enumerate(sdk) if s]
    assert found["counts"] == dict(Counter(s for s in sdk if s))


def test_long_observations_are_cut_and_given_whole_per_step(
    client: TestClient, store: SqlStore, built: Built
) -> None:
    trajectory = store.trajectory(built.long)
    index, full = max(
        ((s.index, s.observation or "") for s in trajectory.steps), key=lambda p: len(p[1])
    )
    assert len(full) > PREVIEW_CHARS
    step = get(client, f"/api/trajectories/{built.long}")["steps"][index]
    assert step["observation"] == full[:PREVIEW_CHARS]
    assert step["truncated"]["observation"] == len(full)
    whole = get(client, f"/api/trajectories/{built.long}/steps/{index}")
    assert whole["observation"] == full
    assert whole["truncated"] == {}


@pytest.mark.parametrize(
    "path",
    [
        "/api/runs/0000000000",
        "/api/runs/not%20an%20id",
        "/api/runs/{score}/records/99",
        "/api/trajectories/ffffffffff",
        "/api/trajectories/{hundred}/steps/500",
        "/api/nothing/here",
    ],
)
def test_bad_ids_are_404_with_one_line(client: TestClient, built: Built, path: str) -> None:
    url = path.format(score=built.score_run, hundred=built.hundred)
    found = get(client, url, status=404)
    assert list(found) == ["error"]
    assert "\n" not in found["error"] and "Traceback" not in found["error"]


@pytest.mark.parametrize("query", ["limit=-1", "limit=abc", "offset=1.5", "limit=999999"])
def test_bad_paging_is_400(client: TestClient, built: Built, query: str) -> None:
    assert "whole number" in get(client, f"/api/runs/{built.score_run}?{query}", 400)["error"]


def test_bad_profile_is_400(client: TestClient, built: Built) -> None:
    assert "profile" in get(client, f"/api/trajectories/{built.hundred}?profile=x", 400)["error"]


def test_hostile_text_comes_back_as_data(client: TestClient, built: Built) -> None:
    found = get(client, f"/api/trajectories/{built.hostile}")
    assert HOSTILE in found["id"]
    assert any(HOSTILE in (s.get("observation") or "") for s in found["steps"])
    run = get(client, f"/api/runs/{built.hostile_run}")["run"]
    assert run["label"] == HOSTILE


@pytest.mark.parametrize("path", ["/", "/app.js", "/app.css", "/api/runs", "/api/runs/zzzz"])
def test_every_answer_has_the_strict_headers(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.headers["content-security-policy"] == CSP
    assert response.headers["x-content-type-options"] == "nosniff"


def test_static_pages_are_served(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and '<script type="module" src="app.js">' in page.text
    assert "javascript" in client.get("/app.js").headers["content-type"]


def test_other_host_names_are_refused(client: TestClient) -> None:
    # A DNS-rebinding page would send its own host name.
    assert client.get("/api/runs", headers={"host": "attacker.example"}).status_code == 400
    assert client.get("/api/runs", headers={"host": "localhost:8765"}).status_code == 200
