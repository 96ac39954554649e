"""The viewer's read-only JSON API. Every handler is a thin call into the store plus `payload`.

Handlers are `async` on purpose: they run on the event loop's one thread, where the app opened its
store, because a SQLite connection may only be used by the thread that made it. Each call is a few
milliseconds of local reads, so serialising them costs a single user nothing.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, cast

import orjson
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agentlens.errors import AgentLensError, ConfigError
from agentlens.process.labeler import LabelProfile
from agentlens.process.profiles import DEFAULT_PROFILE
from agentlens.process.profiles import PROFILES as PROFILE_CONFIGS
from agentlens.store import Run, SqlStore
from agentlens.store.paging import (
    TRAJECTORY_FACETS,
    Direction,
    RecordQuery,
    RunShapes,
    TrajectoryQuery,
    record_page,
    trajectory_page,
)
from agentlens.trajectory import Trajectory
from agentlens.viewer import payload

MAX_PAGE = 5000
PROFILES = tuple(PROFILE_CONFIGS)


class BadRequest(Exception):
    """A query parameter the API cannot use; answered with 400 and this message."""


class TrajectoryCache:
    """Decoded trajectories by digest, and their phase labels per profile (labelling a run of
    50,000 steps takes seconds, and each page of its steps needs them). Safe to keep: a digest
    names exactly one content."""

    def __init__(self, size: int = 32) -> None:
        self._size = size
        self._items: OrderedDict[str, Trajectory] = OrderedDict()
        self._labels: OrderedDict[tuple[str, str], list[str | None]] = OrderedDict()

    def labels(self, store: SqlStore, digest: str, profile: LabelProfile) -> list[str | None]:
        found = self.get(store, digest)
        key = (digest, profile)
        if key in self._labels:
            self._labels.move_to_end(key)
            return self._labels[key]
        labels = self._labels[key] = payload.stages(found, profile)
        if len(self._labels) > self._size:
            self._labels.popitem(last=False)
        return labels

    def get(self, store: SqlStore, digest: str) -> Trajectory:
        if digest in self._items:
            self._items.move_to_end(digest)
            return self._items[digest]
        found = self._items[digest] = store.trajectory(digest)
        if len(self._items) > self._size:
            self._items.popitem(last=False)
        return found


def _store(request: Request) -> SqlStore:
    return cast(SqlStore, request.app.state.store)


def _trajectory(request: Request) -> Trajectory:
    return _cache(request).get(_store(request), request.path_params["digest"])


def _labels(request: Request, profile: LabelProfile) -> list[str | None]:
    return _cache(request).labels(_store(request), request.path_params["digest"], profile)


def _cache(request: Request) -> TrajectoryCache:
    return cast(TrajectoryCache, request.app.state.trajectories)


def _int(request: Request, name: str, default: int, high: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    # ASCII digits only: `isdigit` also takes "²" (which `int` refuses) and other scripts' digits;
    # a length cap before `int`, which refuses numbers of thousands of digits
    digits = raw.lstrip("0")
    if not (raw.isascii() and raw.isdigit()) or len(digits) > len(str(high)) or int(raw) > high:
        raise BadRequest(f"{name} must be a whole number from 0 to {high}")
    return int(raw)


def _profile(request: Request) -> LabelProfile:
    """`?profile=` when given; else (one profile per view) the profile of the run the trajectory
    is opened from (`?run=`); else the default profile."""
    profile = request.query_params.get("profile") or _run_profile(request) or DEFAULT_PROFILE
    if profile not in PROFILES:
        raise BadRequest(f"profile must be one of {', '.join(PROFILES)}")
    return cast(LabelProfile, profile)


def _run_profile(request: Request) -> str | None:
    run_id = request.query_params.get("run")
    if not run_id:
        return None
    try:
        return run_profile(_store(request).run(run_id))
    except AgentLensError:
        return None  # a stale bookmark: the run is gone, label with the default


def run_profile(run: Run) -> str | None:
    """The profile a process-score run used: its settings, else its scorer `process/<name>/1`."""
    named = run.settings.get("profile")
    if isinstance(named, str) and named in PROFILES:
        return named
    parts = run.scorer.split("/")
    return parts[1] if len(parts) == 3 and parts[0] == "process" and parts[1] in PROFILES else None


def _json(content: Any) -> Response:
    """orjson, not Starlette's `json.dumps(allow_nan=False)`: a metric can be infinite (a
    surprise with a zero probability), which JSON cannot carry; it is sent as null."""
    return Response(orjson.dumps(content, option=orjson.OPT_NON_STR_KEYS),
                    media_type="application/json")  # fmt: skip


async def runs(request: Request) -> Response:
    limit = _int(request, "limit", 1000, MAX_PAGE)
    kind = request.query_params.get("kind") or None
    found = _store(request).runs(kind=kind, limit=limit)
    return _json({"runs": [payload.run_dict(r) for r in found]})


async def run(request: Request) -> Response:
    """One page of the run's records, sorted and filtered by the store over all of them."""
    params = request.query_params
    query = RecordQuery(
        sort=params.get("sort") or "position",
        direction=cast(Direction, params.get("dir") or "asc"),
        text=params.get("q", ""),
        outcome=params.get("outcome", ""),
        tier=params.get("tier", ""),
        offset=_int(request, "offset", 0, 10**9),
        limit=_int(request, "limit", 1000, MAX_PAGE),
    )
    try:
        shapes = cast(RunShapes, request.app.state.run_shapes)
        page = record_page(_store(request), request.path_params["run_id"], query, shapes)
    except ConfigError as exc:
        raise BadRequest(str(exc)) from exc
    return _json(
        {
            "run": payload.run_dict(page.run),
            "total": page.total,
            "matched": page.matched,
            "offset": query.offset,
            "limit": query.limit,
            "metric_names": page.metric_names,
            "facets": page.facets,
            "records": [
                payload.record_row(p, r) for p, r in zip(page.positions, page.records, strict=True)
            ],
        }
    )


async def record_of(request: Request) -> Response:
    """The run's first record of this trajectory (a bookmark `?run=ID` without `&record=N`)."""
    store = _store(request)
    found = store.run(request.path_params["run_id"])
    digest = request.path_params["digest"]
    positions = store.positions(found.id, digest)
    if not positions:
        return _not_found(f"run {found.id[:12]} has no record of trajectory {digest[:12]}")
    (first,) = store.records(found.id, position=positions[0])
    return _json(payload.record_full(found.id, positions[0], first))


async def record(request: Request) -> Response:
    store = _store(request)
    found = store.run(request.path_params["run_id"])
    position = request.path_params["position"]
    # one record, not the whole run; a position past the run's records is not looked up (one
    # beyond 64 bits would not even fit a database integer)
    records = store.records(found.id, position=position) if position < found.n_records else []
    if not records:
        return _not_found(
            f"run {found.id[:12]} has no record {position} ({found.n_records} records)"
        )
    return _json(payload.record_full(found.id, position, records[0]))


async def trajectories(request: Request) -> Response:
    params = request.query_params
    query = TrajectoryQuery(
        task=params.get("task", ""),
        equal={key: params.get(key, "") for key in TRAJECTORY_FACETS},
        text=params.get("q", ""),
        sort=params.get("sort", ""),
        direction=cast(Direction, params.get("dir") or "asc"),
        offset=_int(request, "offset", 0, 10**9),
        limit=_int(request, "limit", 500, MAX_PAGE),
    )
    try:
        page = trajectory_page(_store(request), query)
    except ConfigError as exc:
        raise BadRequest(str(exc)) from exc
    return _json(
        {
            "total": page.matched,
            "offset": query.offset,
            "limit": query.limit,
            "facets": page.facets,
            "trajectories": [payload.trajectory_row(r) for r in page.rows],
        }
    )


async def trajectory(request: Request) -> Response:
    found = _trajectory(request)
    digest = request.path_params["digest"]
    offset = _int(request, "offset", 0, 10**9)
    limit = _int(request, "limit", payload.STEP_PAGE, MAX_PAGE)
    profile = _profile(request)
    labels = _labels(request, profile)
    return _json(
        payload.trajectory_dict(digest, found, profile, offset=offset, limit=limit, labels=labels)
    )


async def phases(request: Request) -> Response:
    profile = _profile(request)
    return _json(payload.phases_dict(_trajectory(request), profile, _labels(request, profile)))


async def step(request: Request) -> Response:
    found = _trajectory(request)
    index = request.path_params["index"]
    if index >= len(found.steps):
        return _not_found(f"trajectory {found.id!r} has no step {index} ({len(found.steps)} steps)")
    stage = _labels(request, _profile(request))[index]
    return _json(payload.step_dict(found.steps[index], stage, limit=None))


async def stats(request: Request) -> Response:
    store = _store(request)
    return _json({"url": store.url, **store.stats()})


def _not_found(message: str) -> Response:
    return JSONResponse({"error": message}, status_code=404)


ROUTES = [
    Route("/api/stats", stats),
    Route("/api/runs", runs),
    Route("/api/runs/{run_id:str}", run),
    Route("/api/runs/{run_id:str}/records/{position:int}", record),
    Route("/api/runs/{run_id:str}/trajectories/{digest:str}", record_of),
    Route("/api/trajectories", trajectories),
    Route("/api/trajectories/{digest:str}", trajectory),
    Route("/api/trajectories/{digest:str}/phases", phases),
    Route("/api/trajectories/{digest:str}/steps/{index:int}", step),
]
