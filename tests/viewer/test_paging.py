"""The run page over a store of 1,513 records built from the real dev traces: the API sorts and
filters all of them (not the first 1,000), hostile query values are refused or matched
literally, and the page in headless Chromium shows records only the server could have found."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace
from starlette.testclient import TestClient

from agentlens.store import Record, Run, open_store
from agentlens.store.paging import TrajectoryQuery
from agentlens.store.records import import_records
from agentlens.viewer import create_app
from tests.store.test_paging import (
    N_RECORDS,
    big_run,
    dev_traces,
    expected,
    metric,
    python_trajectory_page,
)
from tests.viewer.server import Server, running
from tests.viewer.test_browser import settled, texts, visit


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, list[Record]]:
    path = tmp_path_factory.mktemp("big-store") / "big.db"
    with open_store(str(path)) as store:
        run_id, records = big_run(store)
    return path, run_id, records


@pytest.fixture
def client(big: tuple[Path, str, list[Record]]) -> Iterator[TestClient]:
    with TestClient(create_app(str(big[0])), base_url="http://127.0.0.1") as opened:
        yield opened


def test_the_api_sorts_every_record_not_the_first_thousand(client: TestClient, big: Any) -> None:
    _, run_id, records = big
    answer = client.get(
        f"/api/runs/{run_id}", params={"sort": "m:tokens", "dir": "desc", "limit": 10}
    )
    assert answer.status_code == 200, answer.text
    found = answer.json()
    want = expected(records, lambda r: metric(r, "tokens"), reverse=True)
    assert [r["position"] for r in found["records"]] == want[:10]
    assert found["total"] == found["matched"] == N_RECORDS
    last = client.get(
        f"/api/runs/{run_id}", params={"sort": "m:tokens", "dir": "desc", "offset": N_RECORDS - 3}
    ).json()
    assert [r["position"] for r in last["records"]] == want[-3:]


def test_the_api_filters_every_record(client: TestClient, big: Any) -> None:
    _, run_id, records = big
    params = {"q": "GPT-4O", "outcome": "failed", "sort": "trajectory_id", "limit": 5000}
    found = client.get(f"/api/runs/{run_id}", params=params).json()
    want = [
        i
        for i, r in enumerate(records)
        if "gpt-4o" in r.trajectory_id.lower() and r.outcome == "failed"
    ]
    assert sorted(r["position"] for r in found["records"]) == want
    assert found["matched"] == len(want) and max(want) >= 1000


@pytest.mark.parametrize(
    ("params", "status"),
    [
        ({"sort": "position desc; DROP TABLE runs"}, 400),
        ({"sort": "m:tokens", "dir": "sideways"}, 400),
        ({"sort": "(SELECT 1)"}, 400),
        ({"q": "%' OR '1'='1"}, 200),
        ({"outcome": "x' OR 1=1 --"}, 200),
    ],
)
def test_hostile_query_values(client: TestClient, big: Any, params: dict, status: int) -> None:
    _, run_id, _ = big
    answer = client.get(f"/api/runs/{run_id}", params=params)
    assert answer.status_code == status, answer.text
    if status == 200:
        assert answer.json()["matched"] == 0
    else:
        assert "\n" not in answer.json()["error"]
    assert client.get(f"/api/runs/{run_id}", params={"limit": 1}).json()["total"] == N_RECORDS


@pytest.fixture(scope="module")
def server(big: Any) -> Iterator[Server]:
    with running(big[0]) as started:
        yield started


def test_the_run_page_sorts_and_filters_on_the_server(page: Any, server: Server, big: Any) -> None:
    _, run_id, records = big
    visit(page, server, f"#/runs/{run_id}?sort=m:tokens&dir=desc", "table.data tbody tr")
    want = expected(records, lambda r: metric(r, "tokens"), reverse=True)
    assert texts(page, "tbody td:nth-child(1)")[:20] == [str(p) for p in want[:20]]
    assert "1,000 of 1,513 matching records shown" in page.inner_text("[data-shown]")
    page.click("button.more")
    assert len(settled(page, "tbody td:nth-child(1)", [str(p) for p in want])) == N_RECORDS
    page.fill("[data-filter]", "gpt-4o")
    page.select_option("select[aria-label='Outcome']", "failed")
    hits = [
        i
        for i in want
        if "gpt-4o" in records[i].trajectory_id.lower() and records[i].outcome == "failed"
    ]
    assert settled(page, "tbody td:nth-child(1)", [str(p) for p in hits]) == [str(p) for p in hits]
    assert any(i >= 1000 for i in hits)


def test_a_page_of_trajectories_reads_only_its_rows(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store's 399 trajectories are filtered and paged by the database: a page of five
    reads five summary rows, a count and the distinct facet combinations (16), not every row."""
    store = client.app.state.store  # type: ignore[attr-defined]
    read: list[int] = []
    rows = store._rows
    monkeypatch.setattr(
        store, "_rows", lambda sql, params: read.append(len(got := rows(sql, params))) or got
    )
    found = client.get("/api/trajectories", params={"limit": 5, "offset": 10}).json()
    assert len(found["trajectories"]) == 5 and found["total"] == 399
    assert sum(read) < 40, read


def test_the_api_sorts_every_trajectory(client: TestClient) -> None:
    store = client.app.state.store  # type: ignore[attr-defined]
    for params in ({"sort": "n_steps", "dir": "desc"}, {"sort": "task_id", "offset": 390}):
        query = TrajectoryQuery(
            sort=params["sort"], direction=params.get("dir", "asc"), offset=params.get("offset", 0),
            limit=9,
        )  # fmt: skip
        found = client.get("/api/trajectories", params={**params, "limit": 9}).json()
        want = python_trajectory_page(store, query).rows
        assert [r["digest"] for r in found["trajectories"]] == [r["digest"] for r in want]
    for bad in ({"sort": "n_steps; DROP TABLE trajectories"}, {"sort": "added", "dir": "up"}):
        answer = client.get("/api/trajectories", params=bad)
        assert answer.status_code == 400 and "\n" not in answer.json()["error"], answer.text


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Server]]:
    """1,197 stored trajectories: the 399 dev traces and two renamed copies of each."""
    path = tmp_path_factory.mktemp("many-store") / "many.db"
    traces = list(dev_traces())
    copies = [replace(t, id=f"{t.id}-copy{n}") for n in (1, 2) for t in traces]
    with open_store(str(path)) as store:
        store.save(Run(kind="import", scorer="import/1"), copies, import_records(copies))
        store.save(Run(kind="import", scorer="import/1"), traces, import_records(traces))
    with running(path) as started:
        yield path, started


def test_the_trajectories_page_sorts_on_the_server(page: Any, many: Any) -> None:
    path, server = many
    with open_store(str(path)) as store:

        def ids(sort: str, direction: str) -> list[str]:
            query = TrajectoryQuery(sort=sort, direction=direction, limit=2000)  # type: ignore[arg-type]
            return [r["trajectory_id"] for r in python_trajectory_page(store, query).rows]

        by_steps, by_steps_up = ids("n_steps", "desc"), ids("n_steps", "asc")
    visit(page, server, "#/trajectories?sort=n_steps&dir=desc", "table.data tbody tr")
    assert texts(page, "tbody td:nth-child(1)") == by_steps[:500]
    assert "500 of 1,197 trajectories shown" in page.inner_text("[data-shown]")
    page.click("button.more")
    assert settled(page, "tbody td:nth-child(1)", by_steps[:1000]) == by_steps[:1000]
    page.click("th button[data-sort='n_steps']")
    assert settled(page, "tbody td:nth-child(1)", by_steps_up[:500]) == by_steps_up[:500]
    assert "sort=n_steps&dir=asc" in page.url
