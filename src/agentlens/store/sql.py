"""The store over any DB-API connection; `sqlite.py` and `postgres.py` give it a connection and
the few ways their SQL differs (`Dialect`). Queries are written with `?` placeholders."""

from __future__ import annotations

import math
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO, Any

import msgspec
import orjson

from agentlens import __version__
from agentlens.errors import StoreError
from agentlens.os_names import scrub, scrubbed
from agentlens.store import content
from agentlens.store.migrations import MIGRATIONS, SCHEMA_VERSION
from agentlens.store.model import INCOMPLETE, Metric, Record, Run
from agentlens.trajectory import Trajectory


@dataclass(frozen=True)
class Dialect:
    name: str
    blob: str
    float: str
    placeholder: str
    transaction: Callable[[Any], AbstractContextManager[None]]
    """A context manager around one write transaction; it keeps writes out of a migration."""
    error: type[Exception]
    """The driver's base error class."""
    nul_in_text: bool = True
    """Whether a text column can hold U+0000 (Postgres' cannot: it is kept as U+FFFD there)."""
    migration: Callable[[Any], AbstractContextManager[None]] | None = None
    """The migration's transaction, which keeps every other writer out (one process migrates a
    new database; no write runs on a half-migrated schema), where `transaction` lets writers run
    at once (Postgres); unset, `transaction` (SQLite's lets in one writer at a time)."""


_CHUNK = 50
"""Trajectories split and compressed at a time."""

_STREAM_CHUNK = 500
"""Trajectories (and then records) per transaction of `save_stream`."""

_CHAIN = """WITH RECURSIVE chain(hash, parent, position, body) AS (
    SELECT hash, parent, position, body FROM steps WHERE hash = ?
    UNION ALL
    SELECT s.hash, s.parent, s.position, s.body FROM steps s JOIN chain c ON s.hash = c.parent)
SELECT body FROM chain ORDER BY position"""


TRAJECTORY_SUMMARIES = (
    "SELECT digest, trajectory_id, task_id, model, agent, source_format, outcome, n_steps, added"
    " FROM trajectories"
)
"""One summary row per stored trajectory (no steps): `trajectories` and the viewer's pages."""
NEWEST_FIRST_KEYS = "added DESC, trajectory_id, digest"
"""A total order (two stored copies of one id differ in digest), so paging never repeats a row."""
NEWEST_FIRST = f" ORDER BY {NEWEST_FIRST_KEYS}"


class SqlStore:
    """Implements `agentlens.seams.Store`."""

    def __init__(self, url: str, connection: Any, dialect: Dialect) -> None:
        self.url = url
        self._db = connection
        self._dialect = dialect
        # one connection, shared by a server's threads: one statement or transaction at a time
        self._lock = threading.RLock()
        self.new_steps = 0
        """Step rows the last `save` added (the others were stored already): counted inside its
        transaction, so another process saving at the same time is not counted."""
        self._migrate()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> SqlStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- the seam ---------------------------------------------------------------------------

    def save(self, run: Run, trajectories: Sequence[Trajectory], records: Sequence[Record]) -> str:
        run.id = run.id or uuid.uuid4().hex
        run.agentlens_version = run.agentlens_version or __version__
        run.n_records = len(records)
        self.new_steps = 0
        steps, rows, given = self._new_trajectories(trajectories)  # before the transaction
        with self._transaction():
            self._insert_trajectories(steps, rows)
            named = {r.trajectory for r in records}
            missing = named - given - self._known_digests(named - given)
            if missing:  # raised inside the transaction: the trajectories are rolled back too
                raise StoreError(
                    self.url, f"records name trajectories not given: {sorted(missing)[:3]}"
                )
            self._insert_run(run)
            self._insert_records(run.id, records)
        return run.id

    def save_part(
        self, run: Run, trajectories: Sequence[Trajectory], records: Sequence[Record]
    ) -> int:
        """Add part of a run saved a part at a time (`cohort --store`: a task at a time), in one
        transaction per part. The run is created by its first part, under its given `id`, and
        is incomplete until `finish_parts`; a record whose `trajectory_id` the run already holds
        is skipped, so a run resumed or repeated under the same id adds nothing twice. Returns
        how many records were added."""
        if not run.id:
            raise StoreError(self.url, "a run saved in parts needs its id")
        steps, rows, given = self._new_trajectories(trajectories)
        with self._transaction():
            self._insert_trajectories(steps, rows)
            self._exec(
                "INSERT INTO runs (id, kind, scorer, label, created, agentlens_version, settings,"
                " summary, n_records) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)"
                # an update of nothing, to lock the run's row: another part of this run saved at
                # the same time (Postgres) waits here, then sees this part's records and positions
                " ON CONFLICT (id) DO UPDATE SET n_records = runs.n_records",
                (run.id, run.kind, run.scorer, run.label, _utc(run.created),
                 run.agentlens_version or __version__, _settings_json(run.settings),
                 _json({**run.summary, INCOMPLETE: True})),
            )  # fmt: skip
            fresh = self._not_held(run.id, records)
            named = {r.trajectory for r in fresh}
            if named - given - self._known_digests(named - given):
                raise StoreError(self.url, "records name trajectories not given")
            start = self._rows(
                "SELECT COALESCE(MAX(position) + 1, 0) AS n FROM records WHERE run_id = ?",
                (run.id,),
            )[0]["n"]
            self._insert_records(run.id, fresh, start=int(start))
            self._exec(
                "UPDATE runs SET n_records = n_records + ? WHERE id = ?", (len(fresh), run.id)
            )
        return len(fresh)

    def finish_parts(self, run_id: str) -> None:
        """Mark the run with this full id complete: its command has saved its last part (or
        had nothing to save, and then no run was made)."""
        with self._transaction():
            for row in self._rows("SELECT summary FROM runs WHERE id = ?", (run_id,)):
                summary = orjson.loads(row["summary"])
                summary.pop(INCOMPLETE, None)
                self._exec("UPDATE runs SET summary = ? WHERE id = ?", (_json(summary), run_id))

    def _not_held(self, run_id: str, records: Sequence[Record]) -> list[Record]:
        """The records whose trajectory id the run does not hold yet (each id once). A held id
        whose stored trajectory differs (a file, or its outcome label, changed since) is an
        error: skipping it would keep a record that no longer matches what was just scored."""
        held = self._held(run_id, {r.trajectory_id for r in records})
        changed = sorted({r.trajectory_id for r in records
                          if held.get(r.trajectory_id, r.trajectory) != r.trajectory})  # fmt: skip
        if changed:
            raise StoreError(
                self.url, f"run {run_id[:12]} was saved from other contents of {len(changed)} of "
                f"these trajectories ({', '.join(map(repr, changed[:3]))}): a file or its outcome "
                f"label changed since; `agentlens store rm {run_id[:12]}`, then run again",
            )  # fmt: skip
        fresh = []
        for record in records:
            if record.trajectory_id not in held:
                held[record.trajectory_id] = record.trajectory
                fresh.append(record)
        return fresh

    def _held(self, run_id: str, ids: set[str]) -> dict[str, str]:
        """The digest of the trajectory the run holds under each of these ids it holds."""
        wanted, held = sorted(ids), dict[str, str]()
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            marks = ", ".join("?" * len(batch))
            sql = (
                "SELECT trajectory_id, trajectory FROM records"
                f" WHERE run_id = ? AND trajectory_id IN ({marks})"
            )
            held |= {r["trajectory_id"]: r["trajectory"] for r in self._rows(sql, [run_id, *batch])}
        return held

    def save_stream(self, run: Run, pairs: Iterable[tuple[Trajectory, Record]]) -> str:
        """`save` for a stream of (trajectory, its record), holding `_CHUNK` trajectories at a
        time. Their new rows (compressed) go in `_STREAM_CHUNK` trajectories' worth per
        transaction, in key order as in `save`; the records wait in a temporary file and go in
        with the run in one last transaction, so no one sees a run half-saved. If the save fails
        midway, the trajectories already in stay (as after `rm` of a run: stored, in no run)."""
        run.id = run.id or uuid.uuid4().hex
        run.agentlens_version = run.agentlens_version or __version__
        pending = _Pending(datetime.now(UTC).isoformat())
        with tempfile.TemporaryFile(prefix="agentlens-records-") as parked:
            for chunk in _chunks(pairs, _CHUNK):
                steps, rows, _ = self._new_trajectories([t for t, _ in chunk], pending.added)
                pending.add(steps, rows, len(chunk))
                parked.writelines(_park(record) for _, record in chunk)
                if pending.trajectories >= _STREAM_CHUNK:
                    self._flush(pending)
            self._flush(pending)
            run.n_records = pending.count
            parked.seek(0)
            with self._transaction():
                self._insert_run(run)
                for start, records in _unparked(parked, _STREAM_CHUNK):
                    self._insert_records(run.id, records, start=start)
        self.new_steps = pending.new_steps
        return run.id

    def _flush(self, pending: _Pending) -> None:
        steps, rows = pending.take()
        with self._transaction():
            self._insert_trajectories(steps, rows)
        pending.new_steps += self.new_steps

    def runs(self, *, kind: str | None = None, limit: int | None = None) -> list[Run]:
        sql = "SELECT * FROM runs" + (" WHERE kind = ?" if kind else "")
        sql += " ORDER BY created DESC, id" + (f" LIMIT {int(limit)}" if limit else "")
        return [_run(row) for row in self._rows(sql, (kind,) if kind else ())]

    def records(
        self, run_id: str, *, bodies: bool = True, position: int | None = None
    ) -> list[Record]:
        """`bodies=False` leaves each record's body empty (metrics only: a run's table);
        `position` gives only that record (none when the run has fewer)."""
        run = self.run(run_id).id
        where, params = ("run_id = ?", (run,)) if position is None else (
            "run_id = ? AND position = ?", (run, position))  # fmt: skip
        metrics: dict[int, list[Metric]] = {}
        for row in self._rows(
            "SELECT position, name, step, value, label, reason FROM metrics"
            f" WHERE {where} ORDER BY position, ordinal",
            params,
        ):
            metrics.setdefault(row["position"], []).append(_metric(row))
        columns = "*" if bodies else "position, trajectory, trajectory_id, task_id, model, outcome"
        return [
            _record(self.url, row, metrics.get(row["position"], []))
            for row in self._rows(
                f"SELECT {columns} FROM records WHERE {where} ORDER BY position", params
            )
        ]

    def positions(self, run_id: str, trajectory: str) -> list[int]:
        """Where the run's records of the trajectory with this full digest are."""
        rows = self._rows(
            "SELECT position FROM records WHERE run_id = ? AND trajectory = ? ORDER BY position",
            (self.run(run_id).id, trajectory),
        )
        return [int(row["position"]) for row in rows]

    def trajectory(self, digest: str) -> Trajectory:
        row = self._unique("trajectories", "digest", digest, "trajectory")
        steps = [r["body"] for r in self._rows(_CHAIN, (row["head"],))] if row["head"] else []
        if len(steps) != row["n_steps"]:
            raise StoreError(
                self.url, f"trajectory {row['digest'][:12]}: {len(steps)} of its {row['n_steps']} "
                "steps are in the store (the database was edited or damaged)",
            )  # fmt: skip
        try:
            trajectory = content.join(bytes(row["meta"]), [bytes(b) for b in steps])
        except content.CORRUPT as exc:
            raise StoreError(
                self.url, f"trajectory {row['digest'][:12]} is damaged ({exc})"
            ) from exc
        if row["schema_version"] != trajectory.schema_version:
            # only when it differs: msgspec leaves a default out by identity, so an equal string
            # read back from the database would be written out (twice, by `dump_jsonl`)
            trajectory.schema_version = row["schema_version"]
        return trajectory

    # -- beyond the seam: lookups the CLI, report and viewer use --------------------------------

    def find_trajectory(self, key: str) -> str:
        """The digest `key` names: a digest or a unique prefix of one, else a trajectory id
        (what `store show` prints) that only one stored trajectory has."""
        try:
            return str(self._unique("trajectories", "digest", key, "trajectory")["digest"])
        except StoreError as exc:
            rows = self._rows("SELECT digest FROM trajectories WHERE trajectory_id = ?", (key,))
            if len(rows) == 1:
                return str(rows[0]["digest"])
            if rows:
                digests = ", ".join(sorted(r["digest"][:12] for r in rows))
                raise StoreError(
                    self.url, f"trajectory id {key!r} names {len(rows)} stored trajectories "
                    f"({digests}): give one of these digests",
                ) from exc  # fmt: skip
            raise

    def run(self, run_id: str) -> Run:
        return _run(self._unique("runs", "id", run_id, "run"))

    def run_trajectories(self, run_id: str) -> list[Trajectory]:
        """The trajectories a run's records are about, once each, in record order."""
        digests = dict.fromkeys(r.trajectory for r in self.records(run_id, bodies=False))
        return [self.trajectory(d) for d in digests]

    def trajectories(self, *, task_id: str | None = None) -> list[dict[str, Any]]:
        """One summary row per stored trajectory (no steps), newest first."""
        sql = TRAJECTORY_SUMMARIES + (" WHERE task_id = ?" if task_id else "") + NEWEST_FIRST
        return list(self._rows(sql, (task_id,) if task_id else ()))

    def stats(self) -> dict[str, int]:
        """Row counts, and how many step rows the content addressing saved."""
        count = {
            t: self._rows(f"SELECT COUNT(*) AS n FROM {t}", ())[0]["n"]
            for t in ("runs", "records", "metrics", "trajectories", "steps")
        }
        count["steps_referenced"] = self._rows(
            "SELECT COALESCE(SUM(n_steps), 0) AS n FROM trajectories", ()
        )[0]["n"]
        return count

    def delete_run(self, run_id: str) -> None:
        run = self.run(run_id).id
        with self._transaction():
            self._exec("DELETE FROM metrics WHERE run_id = ?", (run,))
            self._exec("DELETE FROM records WHERE run_id = ?", (run,))
            self._exec("DELETE FROM runs WHERE id = ?", (run,))

    @property
    def schema_version(self) -> int:
        return int(self._rows("SELECT MAX(version) AS v FROM agentlens_migrations", ())[0]["v"])

    # -- SQL ---------------------------------------------------------------------------------

    def _migrate(self) -> None:
        if self._current():
            return  # opening an up-to-date store writes nothing (a viewer, a second reader)
        with self._transaction(migrating=True):
            self._exec(
                "CREATE TABLE IF NOT EXISTS agentlens_migrations"
                " (version INTEGER PRIMARY KEY, applied TEXT NOT NULL)",
                (),
            )
            done = {
                r["version"] for r in self._rows("SELECT version FROM agentlens_migrations", ())
            }
            if done and max(done) > SCHEMA_VERSION:
                raise StoreError(
                    self.url,
                    f"schema version {max(done)} was written by a newer AgentLens "
                    f"(this one knows {SCHEMA_VERSION}): upgrade agentlens",
                )
            for version, statements in enumerate(MIGRATIONS, start=1):
                if version in done:
                    continue
                for statement in statements:
                    self._exec(
                        statement.format(blob=self._dialect.blob, float=self._dialect.float), ()
                    )
                self._exec(
                    "INSERT INTO agentlens_migrations (version, applied) VALUES (?, ?)",
                    (version, datetime.now(UTC).isoformat()),
                )

    def _current(self) -> bool:
        try:
            rows = self._rows("SELECT MAX(version) AS v FROM agentlens_migrations", ())
        except StoreError:  # no table yet: a new store
            return False
        return rows[0]["v"] == SCHEMA_VERSION

    def _new_trajectories(
        self, trajectories: Sequence[Trajectory], added: str | None = None
    ) -> tuple[list[content.StepRow], list[tuple[Any, ...]], set[str]]:
        """The step rows and trajectory rows of the trajectories not stored yet, each row once,
        in key order; and every given trajectory's digest. Made before the save's transaction
        (which is not held open while steps are hashed and compressed), a chunk at a time: memory
        holds one chunk's bodies as JSON, and every new step's compressed (about a quarter)."""
        digests: set[str] = set()
        steps: dict[str, content.StepRow] = {}
        rows: dict[str, tuple[Any, ...]] = {}
        added = added or datetime.now(UTC).isoformat()
        for start in range(0, len(trajectories), _CHUNK):
            chunk = {s.digest: (s, t) for t in trajectories[start : start + _CHUNK]
                     for s in [content.split(t)]}  # fmt: skip
            known = self._known_digests(chunk.keys() - rows.keys())
            for d, (s, t) in chunk.items():
                if d in known or d in rows:
                    continue
                fresh = content.packed(
                    s._replace(steps=[r for r in s.steps if r.hash not in steps])
                )
                steps.update((r.hash, r._replace(body=_tight(r.body))) for r in fresh.steps)
                rows[d] = (
                    d, s.head, len(s.steps), t.schema_version, t.id, t.task_id, t.model,
                    t.agent.name, t.source.format, t.outcome.status, _tight(fresh.meta), added,
                )  # fmt: skip
            digests |= chunk.keys()
        return [steps[h] for h in sorted(steps)], [rows[d] for d in sorted(rows)], digests

    def _insert_trajectories(
        self, steps: list[content.StepRow], rows: list[tuple[Any, ...]]
    ) -> None:
        """Steps, then trajectories, each in key order: all of the save's rows in the one order
        every save uses. In Postgres, a save inserting a key that another open save has inserted
        waits for that one to end (then skips the row, or inserts it if the other rolled back),
        so two saves taking shared keys in different orders could each wait for the other (a
        deadlock: one is aborted). In one order, a waiting save waits on a key above every key it
        holds, and the save holding that key can itself wait only on a key above that: waits
        climb and never close a circle. A row this save skips is one another save committed, so
        `new_steps` counts exactly the rows this save added."""
        self.new_steps = self._many(
            "INSERT INTO steps (hash, parent, position, body) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (hash) DO NOTHING",
            steps,
        )
        self._many(
            "INSERT INTO trajectories (digest, head, n_steps, schema_version, trajectory_id,"
            " task_id, model, agent, source_format, outcome, meta, added)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (digest) DO NOTHING",
            rows,
        )

    def _insert_run(self, run: Run) -> None:
        self._exec(
            "INSERT INTO runs (id, kind, scorer, label, created, agentlens_version, settings,"
            " summary, n_records) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (run.id, run.kind, run.scorer, run.label, _utc(run.created),
             run.agentlens_version, _settings_json(run.settings), _json(run.summary), run.n_records),
        )  # fmt: skip

    def _insert_records(self, run_id: str, records: Sequence[Record], *, start: int = 0) -> None:
        self._many(
            "INSERT INTO records (run_id, position, trajectory, trajectory_id, task_id, model,"
            " outcome, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (run_id, i, r.trajectory, r.trajectory_id, r.task_id, r.model, r.outcome,
                 content.pack(_dumps(r.body)))
                for i, r in enumerate(records, start)
            ],
        )  # fmt: skip
        self._many(
            "INSERT INTO metrics (run_id, position, ordinal, name, step, value, label, reason)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (run_id, i, j, m.name, m.step, _number(m.value), m.label, m.reason)
                for i, r in enumerate(records, start)
                for j, m in enumerate(r.metrics)
            ],
        )

    def _known_digests(self, digests: set[str]) -> set[str]:
        wanted, known = sorted(digests), set()
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            marks = ", ".join("?" * len(batch))
            sql = f"SELECT digest FROM trajectories WHERE digest IN ({marks})"
            known |= {row["digest"] for row in self._rows(sql, batch)}
        return known

    def _unique(self, table: str, column: str, key: str, what: str) -> dict[str, Any]:
        """The row whose `column` is `key`, else the one row it starts with. The exact match
        goes first: it uses the primary key's index (no LIKE, which scans the table in SQLite
        and in Postgres outside the C locale, and ignores case in SQLite only)."""
        if not key or not all(c.isascii() and (c.isalnum() or c == "-") for c in key):
            raise StoreError(self.url, f"{what} {key!r}: not an id")
        rows = self._rows(f"SELECT * FROM {table} WHERE {column} = ?", (key,))
        if not rows:
            rows = self._rows(
                f"SELECT * FROM {table} WHERE substr({column}, 1, {len(key)}) = ? LIMIT 2", (key,)
            )
        if not rows:
            raise StoreError(self.url, f"no {what} {key!r}")
        if len(rows) > 1:
            raise StoreError(self.url, f"{what} {key!r} is ambiguous: give more characters")
        return rows[0]

    @contextmanager
    def _transaction(self, *, migrating: bool = False) -> Iterator[None]:
        begin = self._dialect.migration if migrating else None
        begin = begin or self._dialect.transaction
        with self._lock, self._driver_errors(), begin(self._db):
            yield

    @contextmanager
    def _driver_errors(self) -> Iterator[None]:
        """A database error (locked, read-only, disk full, connection lost, a constraint) as one
        line naming the store."""
        try:
            yield
        except self._dialect.error as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise StoreError(self.url, f"{first} ({type(exc).__name__})") from exc

    def _sql(self, sql: str) -> str:
        return sql if self._dialect.placeholder == "?" else sql.replace("?", "%s")

    def _params(self, params: Sequence[Any]) -> tuple[Any, ...]:
        nul = self._dialect.nul_in_text
        return tuple(_text(p, nul) if isinstance(p, str) else p for p in params)

    def _exec(self, sql: str, params: Sequence[Any]) -> None:
        with self._lock, self._driver_errors():
            self._db.execute(self._sql(sql), self._params(params))

    def _many(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        """Runs `sql` once per row; returns how many rows it changed (not those it skipped)."""
        if not rows:
            return 0
        with self._lock, self._driver_errors():
            cursor = self._db.cursor()
            cursor.executemany(self._sql(sql), [self._params(r) for r in rows])
            return max(int(cursor.rowcount), 0)

    def _rows(self, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
        with self._lock, self._driver_errors():
            cursor = self._db.execute(self._sql(sql), self._params(params))
            names = [c[0] for c in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _text(value: str, nul_in_text: bool) -> str:
    """A text parameter the database can hold: lone surrogates (which no UTF-8 encoder takes)
    as U+FFFD, and U+0000 too where a text column cannot hold it."""
    if not value.isascii():
        value = scrub(value)
    return value if nul_in_text else value.replace("\x00", "\ufffd")


def _tight(body: bytes) -> bytes:
    """A copy of a compressed body that holds only its bytes: zstandard's output keeps the
    worst-case buffer it was written into (about the uncompressed size)."""
    return bytes(memoryview(body))


def _dumps(value: Any, option: int = 0) -> bytes:
    """JSON of a record's body or a run's settings; lone surrogates in it kept as U+FFFD."""
    try:
        return orjson.dumps(value, option=option)
    except orjson.JSONEncodeError:
        return orjson.dumps(scrubbed(value), option=option)


def _utc(moment: datetime) -> str:
    """Fixed-width UTC text, so that text order is time order (to the microsecond)."""
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat(timespec="microseconds")


def _number(value: float | None) -> float | None:
    """NaN is kept as no value, as SQLite does by itself (Postgres would keep the NaN, and then
    every mean over the metric is NaN); infinities stay."""
    return None if value is None or math.isnan(value) else value


def _json(value: dict[str, Any]) -> str:
    return _dumps(value, orjson.OPT_NON_STR_KEYS).decode()


def _settings_json(settings: dict[str, Any]) -> str:
    """A run's settings hold the paths it was given (`store import ghp_….jsonl`), which the
    report shows: a secret in one is masked, as in every trajectory the store keeps."""
    from agentlens import redaction

    return _json(redaction.redact_value(settings) if redaction.enabled() else settings)


def _run(row: dict[str, Any]) -> Run:
    return Run(
        id=row["id"], kind=row["kind"], scorer=row["scorer"], label=row["label"],
        created=datetime.fromisoformat(row["created"]),
        agentlens_version=row["agentlens_version"], settings=orjson.loads(row["settings"]),
        summary=orjson.loads(row["summary"]), n_records=row["n_records"],
    )  # fmt: skip


def _metric(row: dict[str, Any]) -> Metric:
    return Metric(
        name=row["name"], value=row["value"], label=row["label"], reason=row["reason"],
        step=row["step"],
    )  # fmt: skip


def _record(url: str, row: dict[str, Any], metrics: list[Metric]) -> Record:
    try:
        body = orjson.loads(content.unpack(bytes(row["body"]))) if "body" in row else {}
    except (*content.CORRUPT, orjson.JSONDecodeError) as exc:
        raise StoreError(url, f"record of {row['trajectory_id']!r} is damaged ({exc})") from exc
    return Record(
        trajectory=row["trajectory"], trajectory_id=row["trajectory_id"], task_id=row["task_id"],
        model=row["model"], outcome=row["outcome"], metrics=metrics,
        body=body,
    )  # fmt: skip


class _Pending:
    """Rows of `save_stream` not in the store yet, each once."""

    def __init__(self, added: str) -> None:
        self.added = added
        self.steps: dict[str, content.StepRow] = {}
        self.rows: dict[str, tuple[Any, ...]] = {}
        self.trajectories = self.count = self.new_steps = 0

    def add(self, steps: list[content.StepRow], rows: list[tuple[Any, ...]], count: int) -> None:
        self.steps.update((r.hash, r) for r in steps)
        self.rows.update((row[0], row) for row in rows)
        self.trajectories += count
        self.count += count

    def take(self) -> tuple[list[content.StepRow], list[tuple[Any, ...]]]:
        """The rows in key order (as `save` inserts them), then none pending."""
        steps = [self.steps[h] for h in sorted(self.steps)]
        rows = [self.rows[d] for d in sorted(self.rows)]
        self.steps, self.rows, self.trajectories = {}, {}, 0
        return steps, rows


def _chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    chunk: list[Any] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


_RECORD_ENCODER = msgspec.msgpack.Encoder()
_RECORD_DECODER = msgspec.msgpack.Decoder(Record)


def _park(record: Record) -> bytes:
    body = _RECORD_ENCODER.encode(record)
    return len(body).to_bytes(8, "little") + body


def _unparked(parked: IO[bytes], size: int) -> Iterator[tuple[int, list[Record]]]:
    """The parked records in order, `size` at a time, each batch with its first position."""
    start, batch = 0, []
    while header := parked.read(8):
        batch.append(_RECORD_DECODER.decode(parked.read(int.from_bytes(header, "little"))))
        if len(batch) == size:
            yield start, batch
            start, batch = start + size, []
    if batch:
        yield start, batch
