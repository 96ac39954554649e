"""The demo's results-store section: keep what the demo read and scored in a store, write the
HTML report of the score run, and say how to browse it."""

from __future__ import annotations

from pathlib import Path

from agentlens.demo.context import DemoContext
from agentlens.errors import StoreError
from agentlens.list_text import counted
from agentlens.process.profiles import DEFAULT_PROFILE
from agentlens.process.records import PROCESS_SCORER, score_records
from agentlens.release import cache_dir
from agentlens.report import render_report
from agentlens.store import Run, SqlStore, open_store
from agentlens.store.records import IMPORT_SCORER, import_records


def store_section(ctx: DemoContext) -> None:
    out = demo_folder(ctx)
    db, report = out / "results.db", out / "report.html"
    _refuse_other_store(db)
    for stale in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        stale.unlink(missing_ok=True)  # each demo run starts a fresh store
    pairs = ctx.extras.get("process_pairs", [])
    with open_store(str(db)) as store:
        imported = store.save(
            Run(
                kind="import",
                scorer=IMPORT_SCORER,
                label="demo",
                settings={"data": str(ctx.data_dir)},
            ),
            ctx.trajectories,
            import_records(ctx.trajectories),
        )
        runs = [imported]
        if pairs:
            score = Run(kind="score", scorer=PROCESS_SCORER.format(profile=DEFAULT_PROFILE),
                        label="demo", settings={"protocol": "k=5 donors per task, seed 42",
                                                "profile": DEFAULT_PROFILE})  # fmt: skip
            runs.append(store.save(score, [t for t, _ in pairs], score_records(pairs)))
        stats = store.stats()
        _write_report(store, runs[-1:], report)
    shared = stats["steps_referenced"] - stats["steps"]
    ctx.console.print(
        f"stored {counted(stats['trajectories'], 'trajectory')} ({stats['steps_referenced']:,} "
        f"steps in {stats['steps']:,} step rows: {counted(shared, 'shared step')} kept once) "
        f"and {counted(len(runs), 'run')} in {db}\n"
        f"report: {report}\nbrowse: agentlens view --store {db}",
        highlight=False,
        soft_wrap=True,
    )


def _refuse_other_store(db: Path) -> None:
    """`demo --out .` beside the user's own `results.db`: that file is not the demo's to delete.
    Only a store holding nothing but demo runs is started afresh."""
    if not db.exists():
        return
    try:
        with open_store(str(db)) as store:
            others = [r for r in store.runs() if r.label != "demo"]
    except StoreError:
        others = None
    if others is None or others:
        raise StoreError(
            str(db), "holds runs that are not the demo's; give the demo another --out folder"
        )


def demo_folder(ctx: DemoContext) -> Path:
    """`demo --out DIR`, else `demo/` in the AgentLens cache."""
    folder = Path(ctx.extras.get("out") or cache_dir() / "demo")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _write_report(store: SqlStore, run_ids: list[str], path: Path) -> None:
    path.write_text(render_report(store, run_ids), encoding="utf-8")
