"""One page of a run's records, sorted and filtered by the database (ORDER BY / WHERE / LIMIT /
OFFSET), so the viewer covers every record of a run of any size, not just those it loaded.

The input is hostile (it comes from a URL): the sort column is looked up in a whitelist, a
metric is sorted on only when the run has a metric of that name, and every value reaches the SQL
as a parameter. Same SQL on SQLite and Postgres; NULLs sort last in both directions on both.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentlens.errors import ConfigError
from agentlens.store.model import Metric, Record, Run
from agentlens.store.sql import (
    NEWEST_FIRST,
    NEWEST_FIRST_KEYS,
    TRAJECTORY_SUMMARIES,
    SqlStore,
    _metric,
)

RECORD_COLUMNS = ("position", "trajectory_id", "task_id", "model", "outcome")
"""Record columns one may sort on; `m:<name>` sorts on the run's whole-record metric <name>."""
METRIC_PREFIX = "m:"
MAX_TEXT = 200
"""Longest filter text taken (a trajectory id, task id or model name is far shorter)."""

Direction = Literal["asc", "desc"]

_FIRST_METRIC = (
    "(SELECT {field} FROM metrics m WHERE m.run_id = r.run_id AND m.position = r.position"
    " AND m.name = ? AND m.step IS NULL ORDER BY m.ordinal LIMIT 1)"
)


@dataclass(frozen=True)
class RecordQuery:
    """What the run page asks for; `outcome` "unknown" matches records without one."""

    sort: str = "position"
    direction: Direction = "asc"
    text: str = ""
    outcome: str = ""
    tier: str = ""
    offset: int = 0
    limit: int = 1000


@dataclass(frozen=True)
class RecordPage:
    run: Run
    total: int
    """Records in the run."""
    matched: int
    """Records passing the filters (what the page and its offset are out of)."""
    positions: list[int]
    records: list[Record]
    metric_names: list[str]
    facets: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class RunShape:
    metric_names: list[str]
    facets: dict[str, list[str]]


class RunShapes:
    """The metric names and facets of the runs paged lately. Reading them scans all of a run's
    metrics (150 ms at 50,000 records on SQLite), which every page would repeat. A run is keyed
    by id, creation time and record count: records are only ever added to a run (`cohort
    --store` resumed under its id), and a metric only with its record."""

    def __init__(self, size: int = 32) -> None:
        self._size = size
        self._items: OrderedDict[tuple[str, str, int], RunShape] = OrderedDict()

    def get(self, store: SqlStore, run: Run) -> RunShape:
        key = (run.id, run.created.isoformat(), run.n_records)
        if key in self._items:
            self._items.move_to_end(key)
            return self._items[key]
        found = self._items[key] = run_shape(store, run.id)
        if len(self._items) > self._size:
            self._items.popitem(last=False)
        return found


def run_shape(store: SqlStore, run_id: str) -> RunShape:
    return RunShape(metric_names(store, run_id), _facets(store, run_id))


def record_page(
    store: SqlStore, run_id: str, query: RecordQuery, shapes: RunShapes | None = None
) -> RecordPage:
    """The records of `query`'s page (without bodies), with the run's metric names and the
    outcome and tier values to filter on (from `shapes` when it has the run). A bad sort or
    direction is a `ConfigError`."""
    run = store.run(run_id)
    shape = shapes.get(store, run) if shapes is not None else run_shape(store, run.id)
    names = shape.metric_names
    order, order_params = _order(query, names)
    where, where_params = _where(query)
    matched = store._rows(f"SELECT COUNT(*) AS n FROM records r WHERE {where}",
                          [run.id, *where_params])[0]["n"]  # fmt: skip
    rows = store._rows(
        "SELECT r.position, r.trajectory, r.trajectory_id, r.task_id, r.model, r.outcome"
        f" FROM records r WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?",
        [run.id, *where_params, *order_params, query.limit, query.offset],
    )
    metrics = _metrics(store, run.id, [int(r["position"]) for r in rows])
    return RecordPage(
        run=run,
        total=run.n_records,
        matched=int(matched),
        positions=[int(r["position"]) for r in rows],
        records=[_record(r, metrics.get(int(r["position"]), [])) for r in rows],
        metric_names=names,
        facets=shape.facets,
    )


def metric_names(store: SqlStore, run_id: str) -> list[str]:
    """The run's whole-record metric names in the order the scorer first wrote them."""
    rows = store._rows(
        "SELECT name, MIN(position) AS first, MIN(ordinal) AS ordinal FROM metrics"
        " WHERE run_id = ? AND step IS NULL GROUP BY name ORDER BY first, ordinal, name",
        [run_id],
    )
    return [str(r["name"]) for r in rows]


def _way(direction: str) -> str:
    """SQL's word for a direction from the request (hostile: only asc or desc pass)."""
    if direction not in ("asc", "desc"):
        raise ConfigError("dir must be asc or desc")
    return direction.upper()


def _order(query: RecordQuery, names: Sequence[str]) -> tuple[str, list[Any]]:
    way = _way(query.direction)
    if query.sort in RECORD_COLUMNS:
        column = f"r.{query.sort}"  # from the whitelist, never from the request
        return f"({column} IS NULL) ASC, {column} {way}, r.position ASC", []
    name = query.sort.removeprefix(METRIC_PREFIX)
    if not query.sort.startswith(METRIC_PREFIX) or name not in names:
        raise ConfigError(
            f"sort must be one of {', '.join(RECORD_COLUMNS)} or m:<metric> with a metric of "
            f"this run ({', '.join(names) or 'none'})"
        )
    value, label = _FIRST_METRIC.format(field="value"), _FIRST_METRIC.format(field="label")
    order = (
        f"({value} IS NULL AND {label} IS NULL) ASC, ({value} IS NULL) ASC, {value} {way}, "
        f"{label} {way}, r.position ASC"
    )
    return order, [name] * order.count("m.name = ?")


def _where(query: RecordQuery) -> tuple[str, list[Any]]:
    clauses, params = ["r.run_id = ?"], []
    if query.text:
        clause, text_params = _contains(("r.trajectory_id", "r.task_id", "r.model"),
                                        query.text[:MAX_TEXT])  # fmt: skip
        clauses.append(clause)
        params += text_params
    if query.outcome:
        clauses.append("COALESCE(r.outcome, 'unknown') = ?")
        params.append(query.outcome[:MAX_TEXT])
    if query.tier:
        clauses.append(_FIRST_METRIC.format(field="label") + " = ?")
        params += ["tier", query.tier[:MAX_TEXT]]
    return " AND ".join(clauses), params


def _contains(columns: Sequence[str], text: str) -> tuple[str, list[Any]]:
    """Any of `columns` (whitelisted names) holds `text`, in any case ("MÜLLER" finds "Müller":
    the SQLite store's LOWER is Python's, `sqlite._lower`)."""
    tests = [f"LOWER({c}) LIKE ? ESCAPE '!'" for c in columns]
    return "(" + " OR ".join(tests) + ")", ["%" + _like_escaped(text.lower()) + "%"] * len(columns)


def _like_escaped(text: str) -> str:
    """`text` matched literally by LIKE … ESCAPE '!' (its % and _ are not wildcards; a NUL, which
    would end SQLite's pattern, is U+FFFD as in Postgres text)."""
    return text.replace("\x00", "\ufffd").replace("!", "!!").replace("%", "!%").replace("_", "!_")


def _metrics(store: SqlStore, run_id: str, positions: list[int]) -> dict[int, list[Metric]]:
    found: dict[int, list[Metric]] = {}
    for start in range(0, len(positions), 500):  # bounded IN lists
        chunk = positions[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        for row in store._rows(
            "SELECT position, name, step, value, label, reason FROM metrics"
            f" WHERE run_id = ? AND position IN ({marks}) ORDER BY position, ordinal",
            [run_id, *chunk],
        ):
            found.setdefault(int(row["position"]), []).append(_metric(row))
    return found


def _facets(store: SqlStore, run_id: str) -> dict[str, list[str]]:
    outcomes = store._rows(
        "SELECT DISTINCT COALESCE(outcome, 'unknown') AS v FROM records WHERE run_id = ?",
        [run_id],
    )
    tiers = store._rows(
        "SELECT DISTINCT label AS v FROM metrics"
        " WHERE run_id = ? AND name = 'tier' AND step IS NULL AND label IS NOT NULL",
        [run_id],
    )
    return {
        "outcome": sorted(str(r["v"]) for r in outcomes),
        "tier": sorted(str(r["v"]) for r in tiers),
    }


def _record(row: dict[str, Any], metrics: list[Metric]) -> Record:
    return Record(
        trajectory=row["trajectory"], trajectory_id=row["trajectory_id"], task_id=row["task_id"],
        model=row["model"], outcome=row["outcome"], metrics=metrics,
    )  # fmt: skip


TRAJECTORY_FACETS = ("model", "outcome", "source_format")
"""Summary columns the trajectories page filters on by exact value."""
TRAJECTORY_COLUMNS = (
    "trajectory_id",
    "task_id",
    "model",
    "source_format",
    "outcome",
    "n_steps",
    "added",
)
"""Summary columns the trajectories page sorts on; no sort is newest first."""


@dataclass(frozen=True)
class TrajectoryQuery:
    """The trajectories page: an exact task id, exact values of `TRAJECTORY_FACETS` (empty: any)
    and text the trajectory id contains; sorted on one of `TRAJECTORY_COLUMNS` (NULLs last, ties
    newest first) or, with no sort, newest first."""

    task: str = ""
    equal: dict[str, str] = field(default_factory=dict)
    text: str = ""
    sort: str = ""
    direction: Direction = "asc"
    offset: int = 0
    limit: int = 500


@dataclass(frozen=True)
class TrajectoryPage:
    matched: int
    rows: list[dict[str, Any]]
    """Summary rows as `SqlStore.trajectories` gives them, in the query's order."""
    facets: dict[str, list[str]]
    """The values of each facet among the task's trajectories (all, without a task)."""


def trajectory_page(store: SqlStore, query: TrajectoryQuery) -> TrajectoryPage:
    """One page of the stored trajectories, filtered and paged by the database (not every
    summary row read per page). An unknown facet name or sort is a `ConfigError`."""
    order = _trajectory_order(query)
    scope, scope_params = ("task_id = ?", [query.task]) if query.task else ("1 = 1", [])
    clauses, params = [scope], list(scope_params)
    for key, wanted in query.equal.items():
        if key not in TRAJECTORY_FACETS:
            raise ConfigError(f"filter must be one of {', '.join(TRAJECTORY_FACETS)}")
        if wanted:
            clauses.append(f"{key} = ?")  # from the whitelist, never from the request
            params.append(wanted)
    if query.text:
        clause, text_params = _contains(("trajectory_id",), query.text)
        clauses.append(clause)
        params += text_params
    where = " AND ".join(clauses)
    matched = store._rows(f"SELECT COUNT(*) AS n FROM trajectories WHERE {where}", params)
    rows = store._rows(
        f"{TRAJECTORY_SUMMARIES} WHERE {where}{order} LIMIT ? OFFSET ?",
        [*params, query.limit, query.offset],
    )
    combinations = store._rows(  # one pass over the rows for every facet
        f"SELECT DISTINCT {', '.join(TRAJECTORY_FACETS)} FROM trajectories WHERE {scope}",
        scope_params,
    )
    facets = {
        key: sorted({str(r[key]) for r in combinations if r[key] is not None})
        for key in TRAJECTORY_FACETS
    }
    return TrajectoryPage(int(matched[0]["n"]), rows, facets)


def _trajectory_order(query: TrajectoryQuery) -> str:
    if not query.sort:
        return NEWEST_FIRST
    if query.sort not in TRAJECTORY_COLUMNS:
        raise ConfigError(f"sort must be one of {', '.join(TRAJECTORY_COLUMNS)}")
    column = query.sort  # from the whitelist, never from the request
    return (
        f" ORDER BY ({column} IS NULL) ASC, {column} {_way(query.direction)}, {NEWEST_FIRST_KEYS}"
    )
