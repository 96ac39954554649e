"""What the commands over the store print: `store show` at 80 columns, passwords (never), and the
demo's store beside a user's own."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from agentlens.cli._app import console
from agentlens.cli._demo_store import store_section
from agentlens.cli.demo_cmd import DemoContext
from agentlens.formats.load import read_paths
from agentlens.store import Run as StoredRun
from agentlens.store import open_store
from agentlens.store.records import IMPORT_SCORER, import_records
from tests.cli.conftest import Run
from tests.conftest import BENCH
from tests.store.postgres_server import fresh_database
from tests.store.test_store_cli import TASK
from tests.viewer.server import running


def test_show_at_80_columns_prints_counts_whole_and_never_splits_a_metric(
    run_cli: Callable[..., Run], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(tmp_path / "s.db")
    ref = tmp_path / "ref.json"
    assert run_cli("reference", "build", str(TASK), "-o", str(ref)).code == 0
    assert run_cli("score", str(TASK), "--reference", str(ref), "--store", db).code == 0
    assert run_cli("store", "import", str(TASK), "--store", db).code == 0
    with open_store(db) as store:
        imported, scored = (store.runs(kind=k)[0].id for k in ("import", "score"))
        tokens = {r.trajectory_id: r.metric("tokens") for r in store.records(imported)}
        names = {m.name for r in store.records(scored) for m in r.metrics if m.step is None}
    monkeypatch.setattr(console, "width", 80)

    shown = run_cli("store", "show", imported[:8], "--store", db)
    assert shown.code == 0 and "e+0" not in shown.out
    lines = shown.out.splitlines()
    for tid, metric in tokens.items():
        assert metric is not None and metric.value is not None
        header = next(i for i, line in enumerate(lines) if line.startswith(f"{tid}  "))
        assert f"tokens {int(metric.value)}" in lines[header + 1]

    shown = run_cli("store", "show", scored[:8], "--store", db)
    assert shown.code == 0
    for line in shown.out.splitlines()[1:]:
        assert len(line) <= 80, line
        if line.startswith("  "):  # metric lines: each starts with a metric's name
            cells = line.strip().split("  ")
            assert all(cell.split(" ", 1)[0] in names for cell in cells), line
            assert all(" " in cell for cell in cells), line  # no name without its value


def test_store_info_does_not_print_the_password_of_the_default_store(
    run_cli: Callable[..., Run], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTLENS_STORE", "postgresql://me:s3cret@db.example/agentlens")
    open_store(str(tmp_path / "s.db")).close()
    info = run_cli("store", "info", "--store", str(tmp_path / "s.db"))
    assert info.code == 0, info.err
    assert "s3cret" not in info.out and "postgresql://me:***@db.example/agentlens" in info.out


def test_view_does_not_print_the_password_of_its_store(postgres_url: str) -> None:
    store_url = fresh_database(postgres_url, "agentlens_view_password")
    with open_store(store_url):
        pass  # migrated
    with_password = store_url.replace("postgresql://postgres@", "postgresql://postgres:s3cret@")
    with running(with_password) as server:
        code, printed, err = server.stop()
    assert code == 130, err
    assert printed.startswith("AgentLens viewer on ") and "postgres:***@" in printed
    assert "s3cret" not in printed + err


def _demo_context(out: Path) -> DemoContext:
    read = read_paths([str(TASK)])
    quiet = Console(file=io.StringIO(), width=80)
    ctx = DemoContext(BENCH, quiet, read, 0.0)
    ctx.extras["out"] = str(out)
    return ctx


def test_the_demo_leaves_a_users_own_results_db_alone(tmp_path: Path) -> None:
    db = tmp_path / "results.db"
    trajectories = read_paths([str(sorted(TASK.glob("*.json"))[0])]).trajectories
    with open_store(str(db)) as store:
        mine = store.save(
            StoredRun(kind="import", scorer=IMPORT_SCORER, label="nightly"),
            trajectories,
            import_records(trajectories),
        )
    with pytest.raises(Exception, match="not the demo's"):
        store_section(_demo_context(tmp_path))
    with open_store(str(db)) as store:
        assert [r.id for r in store.runs()] == [mine]


def test_the_demo_starts_its_own_store_afresh(tmp_path: Path) -> None:
    ctx = _demo_context(tmp_path)
    store_section(ctx)
    store_section(ctx)  # its own store, from the run before: replaced
    with open_store(str(tmp_path / "results.db")) as store:
        assert [r.label for r in store.runs()] == ["demo"]
