"""One page of a big run through the viewer's API: how a request's time grows with the run.

Run by hand:  python benchmarks/run_page.py [--data ../shared/data] [--records 5000 50000]
              [--trajectories 20000]

A run of N import records (the psf__requests-1724 dev traces, repeated, each with a tier) is saved
into a fresh SQLite store; then each page request is timed once warm (the second of two): the
first page, the last page, a sort on a metric, a sort on a record column, a text filter, a tier
filter and all three together. Pages come from the database (`store/paging.py`), so a request
costs what its SQL does; the run's metric names and facets are read once per run, not per page.
With `--trajectories N`, also a page of the trajectories list over N stored trajectories (one
dev trace under N ids), best of five.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import msgspec
from starlette.testclient import TestClient

from agentlens.formats import read_paths
from agentlens.store import Metric, Record, Run, open_store
from agentlens.store.records import import_records
from agentlens.viewer import create_app

QUERIES = (
    "limit=100",
    "limit=100&offset={last}",
    "sort=m:tokens&dir=desc&limit=100",
    "sort=model&limit=100",
    "q=gemini&limit=100",
    "tier=B&limit=100",
    "sort=m:tokens&tier=B&q=pass&limit=100",
)


def build(path: Path, data: Path, n_records: int) -> None:
    task = data / "agentlens-bench-dev" / "trajectories" / "psf__requests-1724"
    traces = read_paths([task]).trajectories
    base = import_records(traces)
    records = []
    for i in range(n_records):
        record = base[i % len(base)]
        fields = {k: getattr(record, k) for k in record.__struct_fields__}
        tier = Metric(name="tier", label="ABC"[i % 3])
        records.append(Record(**{**fields, "metrics": [*record.metrics, tier]}))
    with open_store(str(path)) as store:
        store.save(Run(kind="import", scorer="import/1", label="run_page"), traces, records)


def measure(path: Path, n_records: int) -> None:
    with TestClient(create_app(str(path)), base_url="http://127.0.0.1") as client:
        run_id = client.get("/api/runs").json()["runs"][0]["id"]
        for query in QUERIES:
            query = query.format(last=n_records - 50)
            url = f"/api/runs/{run_id}?{query}"
            client.get(url)
            began = time.perf_counter()
            answer = client.get(url)
            took = time.perf_counter() - began
            print(
                f"{n_records:>8} {took * 1000:8.1f} ms  {answer.json()['matched']:>7} matched  {query}"
            )


def trajectories(path: Path, data: Path, n_trajectories: int) -> None:
    task = data / "agentlens-bench-dev" / "trajectories" / "psf__requests-1724"
    real = read_paths([task]).trajectories[0]
    copies = [msgspec.structs.replace(real, id=f"{real.id}-{i}") for i in range(n_trajectories)]
    with open_store(str(path)) as store:
        store.save(Run(kind="import", scorer="import/1"), copies, import_records(copies))
    with TestClient(create_app(str(path)), base_url="http://127.0.0.1") as client:
        for query in ("limit=100", "limit=100&q=-77", "limit=100&sort=n_steps&dir=desc"):
            took = []
            for _ in range(5):
                began = time.perf_counter()
                client.get(f"/api/trajectories?{query}")
                took.append(time.perf_counter() - began)
            print(f"{n_trajectories:>8} {min(took) * 1000:8.1f} ms  trajectories?{query}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--records", type=int, nargs="*", default=[5000, 50000])
    parser.add_argument("--trajectories", type=int, default=0)
    args = parser.parse_args()
    if args.trajectories:
        with tempfile.TemporaryDirectory() as folder:
            trajectories(Path(folder) / "store.db", args.data, args.trajectories)
    for n_records in args.records:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "store.db"
            build(path, args.data, n_records)
            measure(path, n_records)


if __name__ == "__main__":
    main()
