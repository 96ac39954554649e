"""The store's schema, as append-only numbered migrations: never edit one that has shipped, add
the next. `{blob}` and `{float}` are filled in per database (BLOB/REAL in SQLite, BYTEA/DOUBLE
PRECISION in Postgres); times are ISO-8601 UTC text, which sorts as time does in both."""

from __future__ import annotations

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 1: trajectories as content-addressed step chains; runs, their records and metrics
    (
        """CREATE TABLE steps (
            hash TEXT PRIMARY KEY,
            parent TEXT,
            position INTEGER NOT NULL,
            body {blob} NOT NULL)""",
        """CREATE TABLE trajectories (
            digest TEXT PRIMARY KEY,
            head TEXT REFERENCES steps(hash),
            n_steps INTEGER NOT NULL,
            schema_version TEXT NOT NULL,
            trajectory_id TEXT NOT NULL,
            task_id TEXT,
            model TEXT,
            agent TEXT,
            source_format TEXT,
            outcome TEXT,
            meta {blob} NOT NULL,
            added TEXT NOT NULL)""",
        "CREATE INDEX trajectories_by_id ON trajectories(trajectory_id)",
        "CREATE INDEX trajectories_by_task ON trajectories(task_id)",
        """CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            scorer TEXT NOT NULL,
            label TEXT,
            created TEXT NOT NULL,
            agentlens_version TEXT NOT NULL,
            settings TEXT NOT NULL,
            summary TEXT NOT NULL,
            n_records INTEGER NOT NULL)""",
        "CREATE INDEX runs_by_created ON runs(created)",
        """CREATE TABLE records (
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            trajectory TEXT NOT NULL REFERENCES trajectories(digest),
            trajectory_id TEXT NOT NULL,
            task_id TEXT,
            model TEXT,
            outcome TEXT,
            body {blob} NOT NULL,
            PRIMARY KEY (run_id, position))""",
        "CREATE INDEX records_by_trajectory ON records(trajectory)",
        """CREATE TABLE metrics (
            run_id TEXT NOT NULL,
            position INTEGER NOT NULL,
            ordinal INTEGER NOT NULL,
            name TEXT NOT NULL,
            step INTEGER,
            value {float},
            label TEXT,
            reason TEXT,
            FOREIGN KEY (run_id, position) REFERENCES records(run_id, position) ON DELETE CASCADE)""",
        "CREATE INDEX metrics_by_record ON metrics(run_id, position, ordinal)",
        "CREATE INDEX metrics_by_name ON metrics(name, value)",
    ),
)

SCHEMA_VERSION = len(MIGRATIONS)
