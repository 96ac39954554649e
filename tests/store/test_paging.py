"""Server-side sort, filter and paging of a run's records (the viewer's run page), on SQLite and a
real Postgres, over a run of 1,513 records built from the real dev traces: every answer is
checked against the same order and filter computed in Python over all records."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache

import pytest
from msgspec.structs import replace

from agentlens.errors import ConfigError
from agentlens.formats import read_paths
from agentlens.store import Metric, Record, Run, SqlStore, open_store
from agentlens.store.paging import (
    TRAJECTORY_COLUMNS,
    TRAJECTORY_FACETS,
    RecordQuery,
    RunShapes,
    TrajectoryPage,
    TrajectoryQuery,
    record_page,
    trajectory_page,
)
from agentlens.store.records import import_records
from agentlens.trajectory import Trajectory
from tests.conftest import BENCH
from tests.store.conftest import new_store_url

N_RECORDS = 1513


@cache
def dev_traces() -> tuple[Trajectory, ...]:
    return tuple(read_paths([BENCH / "trajectories"]).trajectories)


def big_run(store: SqlStore) -> tuple[str, list[Record]]:
    """1,513 import records of the 399 dev traces (each 3-4 times), with a tier by step count."""
    traces = dev_traces()
    base = import_records(traces)
    records = []
    for i in range(N_RECORDS):
        record = base[i % len(base)]
        steps = record.metrics[0].value or 0
        tier = "A" if steps < 40 else "B" if steps < 80 else "C"
        records.append(
            Record(
                **{**_fields(record), "metrics": [*record.metrics, Metric(name="tier", label=tier)]}
            )
        )
    run_id = store.save(
        Run(kind="import", scorer="import/1", label="paging"), list(traces), records
    )
    return run_id, records


@dataclass(frozen=True)
class BigRun:
    store: SqlStore
    run_id: str
    records: tuple[Record, ...]


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def big(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BigRun]:
    """The big run saved once per backend, for the tests that only read it (saving its 399 traces
    and 1,513 records took most of each such test's time)."""
    with open_store(new_store_url(request, tmp_path_factory.mktemp("paging"))) as store:
        run_id, records = big_run(store)
        yield BigRun(store, run_id, tuple(records))


def _fields(record: Record) -> dict:
    return {k: getattr(record, k) for k in record.__struct_fields__}


def every_page(store: SqlStore, run_id: str, query: RecordQuery) -> list[int]:
    positions: list[int] = []
    while True:
        page = record_page(
            store, run_id, RecordQuery(**{**query.__dict__, "offset": len(positions)})
        )
        positions += page.positions
        if not page.positions:
            return positions


def metric(record: Record, name: str) -> float | str | None:
    found = record.metric(name)
    return None if found is None else (found.value if found.value is not None else found.label)


def expected(records: Sequence[Record], key, *, reverse: bool, keep=lambda r: True) -> list[int]:
    kept = [(i, key(r)) for i, r in enumerate(records) if keep(r)]
    present = sorted(
        [(v, i) for i, v in kept if v is not None], key=lambda x: x[0], reverse=reverse
    )
    # ties keep position order in both directions; NULLs last
    present = sorted(present, key=lambda x: (x[0], -x[1] if reverse else x[1]), reverse=reverse)
    return [i for _, i in present] + [i for i, v in kept if v is None]


def test_sorting_by_a_metric_covers_every_record(big: BigRun) -> None:
    store, run_id, records = big.store, big.run_id, big.records
    query = RecordQuery(sort="m:tokens", direction="desc", limit=400)
    got = every_page(store, run_id, query)
    assert len(got) == N_RECORDS
    assert got == expected(records, lambda r: metric(r, "tokens"), reverse=True)
    first = record_page(store, run_id, RecordQuery(sort="m:steps", direction="asc", limit=5))
    assert first.total == first.matched == N_RECORDS
    assert [m.name for m in first.records[0].metrics][:2] == ["steps", "tool_calls"]
    assert first.metric_names[:2] == ["steps", "tool_calls"] and "tier" in first.metric_names
    assert first.positions == expected(records, lambda r: metric(r, "steps"), reverse=False)[:5]


def test_filters_cover_every_record(big: BigRun) -> None:
    store, run_id, records = big.store, big.run_id, big.records
    text = "Sonnet"  # case-insensitive, over trajectory id, task id and model

    def keep(r: Record) -> bool:
        hay = [r.trajectory_id, r.task_id, r.model]
        return (
            r.outcome == "failed"
            and metric(r, "tier") == "B"
            and any(v and text.lower() in v.lower() for v in hay)
        )

    query = RecordQuery(sort="trajectory_id", text=text, outcome="failed", tier="B", limit=4)
    page = record_page(store, run_id, query)
    wanted = [i for i, r in enumerate(records) if keep(r)]
    assert page.matched == len(wanted) > 4  # more than one page, all from the whole run
    assert max(wanted) >= 1000  # found beyond the first 1,000 records
    passed = record_page(store, run_id, RecordQuery(outcome="passed", limit=1))
    assert passed.matched == sum(r.outcome == "passed" for r in records) > 900
    got = every_page(store, run_id, query)
    assert sorted(got) == wanted
    assert [records[i].trajectory_id for i in got] == sorted(records[i].trajectory_id for i in got)
    assert page.facets["outcome"] == sorted({r.outcome or "unknown" for r in records})
    assert page.facets["tier"] == ["A", "B", "C"]


@pytest.mark.parametrize(
    "sort", ["position; DROP TABLE runs", "body", "m:no_such_metric", "r.position", "m:"]
)
def test_a_hostile_sort_is_refused(big: BigRun, sort: str) -> None:
    store, run_id = big.store, big.run_id
    with pytest.raises(ConfigError, match="sort must be one of"):
        record_page(store, run_id, RecordQuery(sort=sort))
    assert store.run(run_id).n_records == N_RECORDS


@pytest.mark.parametrize("text", ["%", "_", "' OR 1=1 --", "!", "\\", "\x00"])
def test_filter_text_is_matched_literally(big: BigRun, text: str) -> None:
    store, run_id, records = big.store, big.run_id, big.records
    page = record_page(store, run_id, RecordQuery(text=text))
    literal = [
        r
        for r in records
        if any(v and text in v.lower() for v in (r.trajectory_id, r.task_id, r.model))
    ]
    assert page.matched == len(literal)
    if text == "_":
        assert page.matched > 0  # task ids like psf__requests-1724 hold underscores
    if text == "%":
        assert page.matched == 0


def test_later_pages_do_not_rescan_the_runs_metrics(
    big: BigRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The metric names and facets take a scan of all of a run's metrics (150 ms a page at 50,000
    records on SQLite); the viewer's later pages of the same run reuse them."""
    store, run_id = big.store, big.run_id
    shapes = RunShapes()
    first = record_page(store, run_id, RecordQuery(limit=5), shapes)
    statements: list[str] = []
    rows = store._rows
    monkeypatch.setattr(
        store, "_rows", lambda sql, params: statements.append(sql) or rows(sql, params)
    )
    again = record_page(store, run_id, RecordQuery(sort="m:tokens", offset=900, limit=5), shapes)
    assert (again.metric_names, again.facets) == (first.metric_names, first.facets)
    assert statements and not [s for s in statements if "GROUP BY" in s or "DISTINCT" in s]


def test_a_run_that_gains_records_shows_their_metrics_and_tiers(store: SqlStore) -> None:
    """A run saved in parts gains records (and metric names, tier values) between two pages."""
    traces = dev_traces()[:6]
    records = import_records(traces)
    run = Run(id="a" * 32, kind="import", scorer="import/1")
    shapes = RunShapes()
    store.save_part(run, traces[:3], records[:3])
    before = record_page(store, run.id, RecordQuery(), shapes)
    tiered = [Record(**{**_fields(r), "metrics": [*r.metrics, Metric(name="tier", label="B")]})
              for r in records[3:]]  # fmt: skip
    store.save_part(run, traces[3:], tiered)
    after = record_page(store, run.id, RecordQuery(), shapes)
    assert "tier" not in before.metric_names and before.facets["tier"] == []
    assert "tier" in after.metric_names and after.facets["tier"] == ["B"]
    assert after.matched == 6


@pytest.mark.parametrize(
    "text", ["Ärger-Ōsaka", "ger-Ō", "ÄRGER-ŌSAKA-RUN", "ärger-ōsaka", "MÜLLER", "müller"]
)
def test_filter_text_as_shown_finds_a_non_ascii_id(store: SqlStore, text: str) -> None:
    """SQLite's own LOWER folds ASCII only: the filter must still find an id or model typed
    (or pasted) as the page shows it, or in any case."""
    (real,) = dev_traces()[:1]
    renamed = replace(real, id="Ärger-Ōsaka-run", model="Müller-LLM")
    run_id = store.save(Run(kind="import", scorer="import/1"), [renamed], import_records([renamed]))
    assert record_page(store, run_id, RecordQuery(text=text)).matched == 1


@pytest.mark.parametrize("text", ["ärger-ō", "ÄRGER", "Ärger-Ōsaka-run"])
def test_the_trajectories_list_finds_a_non_ascii_id_in_any_case(store: SqlStore, text: str) -> None:
    (real,) = dev_traces()[:1]
    renamed = replace(real, id="Ärger-Ōsaka-run")
    store.save(Run(kind="import", scorer="import/1"), [renamed], import_records([renamed]))
    page = trajectory_page(store, TrajectoryQuery(text=text))
    assert [row["trajectory_id"] for row in page.rows] == ["Ärger-Ōsaka-run"]


def python_trajectory_page(store: SqlStore, query: TrajectoryQuery) -> TrajectoryPage:
    """The viewer's former answer: every summary row read, then filtered and sorted in Python."""
    rows = store.trajectories(task_id=query.task or None)  # newest first
    facets = {k: sorted({str(r[k]) for r in rows if r[k] is not None}) for k in TRAJECTORY_FACETS}
    for key, wanted in query.equal.items():
        rows = [r for r in rows if r[key] == wanted] if wanted else rows
    text = query.text.lower()
    rows = [r for r in rows if text in str(r["trajectory_id"]).lower()]
    if query.sort:  # a stable sort: ties stay newest first, in both directions; NULLs last
        present = [r for r in rows if r[query.sort] is not None]
        present.sort(key=lambda r: r[query.sort], reverse=query.direction == "desc")
        rows = present + [r for r in rows if r[query.sort] is None]
    return TrajectoryPage(len(rows), rows[query.offset : query.offset + query.limit], facets)


TRAJECTORY_QUERIES = [
    TrajectoryQuery(),
    TrajectoryQuery(offset=390, limit=20),
    TrajectoryQuery(task="psf__requests-1724", limit=7),
    TrajectoryQuery(equal={"outcome": "failed", "model": ""}, text="SONNET", offset=3, limit=9),
    TrajectoryQuery(equal={"source_format": "agentlens-bench"}, limit=5),
    TrajectoryQuery(equal={"model": "x' OR 1=1 --"}),
    TrajectoryQuery(text="_"),
    TrajectoryQuery(text="%"),
    TrajectoryQuery(text="\x00"),
    *(TrajectoryQuery(sort=c, direction="desc", limit=50) for c in TRAJECTORY_COLUMNS),
    *(TrajectoryQuery(sort=c, offset=350, limit=40) for c in TRAJECTORY_COLUMNS),
    TrajectoryQuery(sort="n_steps", direction="desc", equal={"outcome": "passed"}, text="gpt"),
]


def test_a_trajectory_page_is_what_python_finds_over_every_row(big: BigRun) -> None:
    for query in TRAJECTORY_QUERIES:
        assert trajectory_page(big.store, query) == python_trajectory_page(big.store, query), query


@pytest.mark.parametrize(
    ("sort", "direction"),
    [("n_steps; DROP TABLE trajectories", "asc"), ("body", "asc"), ("n_steps", "sideways")],
)
def test_a_hostile_trajectory_sort_is_refused(store: SqlStore, sort: str, direction: str) -> None:
    with pytest.raises(ConfigError, match=r"must be one of|asc or desc"):
        trajectory_page(store, TrajectoryQuery(sort=sort, direction=direction))  # type: ignore[arg-type]
