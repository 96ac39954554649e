"""What the commands over the store print: `store show` at 80 columns, passwords (never), and the
demo's store beside a user's own."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest
from rich.console import Console

from agentlens.cli._app import console
from agentlens.demo.context import DemoContext
from agentlens.demo.results_store import store_section
from agentlens.formats.stream import read_paths
from agentlens.store import Run as StoredRun
from agentlens.store import open_store
from agentlens.store.records import IMPORT_SCORER, import_records
from tests.cli.conftest import Run
from tests.cli.test_counts_read import ONE
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
        assert f"tokens {int(metric.value):,}" in lines[header + 1]

    shown = run_cli("store", "show", scored[:8], "--store", db)
    assert shown.code == 0
    for line in shown.out.splitlines()[1:]:
        assert len(line) <= 80, line
        if line.startswith("  "):  # metric lines: each starts with a metric's name
            cells = line.strip().split("  ")
            assert all(cell.split(" ", 1)[0] in names for cell in cells), line
            assert all(" " in cell for cell in cells), line  # no name without its value


@pytest.mark.parametrize("width", [60, 200])
def test_runs_show_and_rm_group_the_thousands_of_every_count(
    run_cli: Callable[..., Run], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    """`store runs` printed a run of 1200 records as `1200` in its table, and `store show` a
    run's 263,615 tokens as `263615`, while `store rm` and every other count said `1,200`."""
    monkeypatch.setattr(console, "width", width)
    db = str(tmp_path / "s.db")
    (real,) = read_paths([ONE]).trajectories
    tokens = real.usage_known()
    assert tokens is not None and tokens.total_tokens >= 1000
    with open_store(db) as store:
        run = StoredRun(kind="import", scorer=IMPORT_SCORER)
        run_id = store.save(run, [real], import_records([real]) * 1200)
    assert "1,200" in run_cli("store", "runs", "--store", db).out
    shown = run_cli("store", "show", run_id, "--store", db).out
    assert f"{tokens.total_tokens:,}" in shown and str(tokens.total_tokens) not in shown
    assert "(import, 1,200 records)" in run_cli("store", "rm", run_id, "--store", db).out


def test_store_info_does_not_print_the_password_of_the_default_store(
    run_cli: Callable[..., Run], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTLENS_STORE", "postgresql://me:s3cret@db.example/agentlens")
    open_store(str(tmp_path / "s.db")).close()
    info = run_cli("store", "info", "--store", str(tmp_path / "s.db"))
    assert info.code == 0, info.err
    assert "s3cret" not in info.out
    # the default is named only when it is the store shown: beside another it read as the one used
    assert "db.example" not in info.out and info.out.startswith(f"{tmp_path / 's.db'} (schema 1)\n")


def test_store_info_says_when_it_shows_the_default_store(
    run_cli: Callable[..., Run], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTLENS_STORE", str(tmp_path / "default.db"))
    open_store(str(tmp_path / "default.db")).close()
    info = run_cli("store", "info")
    assert info.out.startswith(f"{tmp_path / 'default.db'} (schema 1; the default store)\n")


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


def test_store_trajectory_prints_what_convert_writes_byte_for_byte(
    run_cli: Callable[..., Run], store_url: str, tmp_path: Path
) -> None:
    """Read back from the database, `schema_version` is an equal but new string: it must not be
    written out a second time (it was: `{"schema_version":…,"schema_version":…,…`)."""
    from agentlens.formats.jsonl import dump_jsonl

    path = sorted(TASK.glob("*.json"))[0]
    assert run_cli("store", "import", str(path), "--store", store_url).code == 0
    (trajectory,) = read_paths([str(path)]).trajectories
    expected = tmp_path / "expected.jsonl"
    dump_jsonl([trajectory], expected)
    out = tmp_path / "deeper" / "folder" / "t.jsonl"  # its folder is created
    shown = run_cli("store", "trajectory", trajectory.id, "-o", str(out), "--store", store_url)
    assert shown.code == 0, shown.err
    assert out.read_bytes() == expected.read_bytes()
    assert out.read_bytes().count(b'"schema_version"') == 1


def test_store_trajectory_takes_the_trajectory_id_store_show_prints(
    run_cli: Callable[..., Run], store_url: str
) -> None:
    paths = sorted(TASK.glob("*.json"))[:2]
    assert run_cli("store", "import", *map(str, paths), "--store", store_url).code == 0
    with open_store(store_url) as db:
        (record, _) = db.records(db.runs()[0].id)
    by_id = run_cli("store", "trajectory", record.trajectory_id, "--store", store_url)
    by_digest = run_cli("store", "trajectory", record.trajectory[:10], "--store", store_url)
    assert by_id.code == by_digest.code == 0, by_id.err
    assert by_id.out == by_digest.out and f'"id":"{record.trajectory_id}"' in by_id.out

    # the same id with other content (an edited trace): ambiguous, and the digests are named
    (trajectory,) = read_paths([str(paths[0])]).trajectories
    edited = msgspec.structs.replace(trajectory, task="edited")
    with open_store(store_url) as db:
        db.save(StoredRun(kind="import", scorer=IMPORT_SCORER), [edited], import_records([edited]))
    twice = run_cli("store", "trajectory", trajectory.id, "--store", store_url)
    assert twice.code == 2 and "names 2 stored trajectories" in twice.err
    assert record.trajectory[:12] in twice.err and len(twice.err.strip().splitlines()) == 1


def test_import_of_a_mistyped_path_saves_no_run_and_creates_no_store(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    db = tmp_path / "results.db"
    typo = run_cli("store", "import", str(TASK) + "-typo", "--store", str(db))
    assert typo.code == 1 and "nothing imported" in typo.err
    assert not db.exists()
    assert run_cli("store", "import", str(TASK), "--store", str(db)).code == 0
    again = run_cli("store", "import", str(tmp_path / "nothing-here"), "--store", str(db))
    assert again.code == 1
    with open_store(str(db)) as store:
        assert [r.kind for r in store.runs()] == ["import"]  # no empty second run


def test_runs_at_80_columns_keep_ids_scorers_and_times_whole(
    run_cli: Callable[..., Run], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(tmp_path / "s.db")
    ref = tmp_path / "ref.json"
    assert run_cli("reference", "build", str(TASK), "-o", str(ref)).code == 0
    label = "django-nightly-build"
    assert run_cli("score", str(TASK), "--reference", str(ref), "--store", db,
                   "--run-label", label).code == 0  # fmt: skip
    with open_store(db) as store:
        (run,) = store.runs()
    for width in (80, 120):
        monkeypatch.setattr(console, "width", width)
        listed = run_cli("store", "runs", "--store", db)
        assert listed.code == 0
        assert all(len(line) <= width for line in listed.out.splitlines()[1:]), listed.out
        for whole in (run.id[:12], run.scorer, label, f"{run.created:%Y-%m-%d %H:%M}"):
            assert whole in listed.out, (width, whole, listed.out)


def test_show_prints_a_table_only_when_no_cell_has_to_fold(
    run_cli: Callable[..., Run], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A score run's 12 columns and 53-character ids do not fit 120 columns: the ids were cut
    into 9-character pieces; now such a run is printed one record per line, whole."""
    db = str(tmp_path / "s.db")
    ref = tmp_path / "ref.json"
    assert run_cli("reference", "build", str(TASK), "-o", str(ref)).code == 0
    assert run_cli("score", str(TASK), "--reference", str(ref), "--store", db).code == 0
    with open_store(db) as store:
        run_id = store.runs()[0].id
        ids = [r.trajectory_id for r in store.records(run_id, bodies=False)]
    for width in (120, 400):
        monkeypatch.setattr(console, "width", width)
        shown = run_cli("store", "show", run_id[:8], "--store", db)
        assert shown.code == 0
        assert all(len(line) <= width for line in shown.out.splitlines())
        assert all(tid in shown.out for tid in ids), width
    assert "┃ trajectory" in shown.out  # at 400 columns it fits: a table


ESCAPES = "\x1b[2J\x1b]0;owned\x07\x1b[8m"
"""Clear the screen, retitle the window, hide what follows: a terminal runs these if printed."""


@pytest.mark.parametrize("width", [80, 300])
def test_store_runs_and_show_print_a_traces_escape_codes_inert(
    run_cli: Callable[..., Run], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    """A trajectory id, model and task from a trace file, and a label in a shared store, carry
    escape codes: `store runs` and `store show` (table and lines) print them as `␛` and `␇`."""
    monkeypatch.setattr(console, "width", width)
    db = str(tmp_path / "s.db")
    trajectories = read_paths([TASK]).trajectories[:2]
    for t in trajectories:
        t.id, t.model = f"run{ESCAPES}{t.id}", f"model{ESCAPES}"
    with open_store(db) as store:
        run = StoredRun(kind="import", scorer=IMPORT_SCORER, label=f"label{ESCAPES}")
        run_id = store.save(run, trajectories, import_records(trajectories))
    listed = run_cli("store", "runs", "--store", db)
    shown = run_cli("store", "show", run_id, "--store", db)
    for printed in (listed.out, shown.out):
        assert "\x1b" not in printed and "\x07" not in printed
    assert "label␛[2J␛]0;owned" in listed.out.replace("\n", "")
    assert f"run␛[2J␛]0;owned␇␛[8m{trajectories[0].id[len('run') + len(ESCAPES) :]}" in (
        shown.out.replace("\n", "").replace("│", "").replace(" ", "")
    )


def test_the_stored_line_names_a_store_path_with_brackets_as_it_is(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    """`[bold]` in a store's file name was read as markup: "stored … in …/xy.db", a file that
    does not exist."""
    db = tmp_path / "x[bold]y.db"
    ref = tmp_path / "ref.json"
    assert run_cli("reference", "build", str(TASK), "-o", str(ref)).code == 0
    scored = run_cli("score", str(TASK), "--reference", str(ref), "--store", str(db))
    cohort = run_cli("cohort", str(TASK), "--protocol", "agentlens-bench", "--no-tables",
                     "--store", str(db))  # fmt: skip
    for done in (scored, cohort):
        assert done.code == 0, done.err
        assert f"in {db}" in done.err.replace("\n", "")


RUN_LABELS = {"two\nlines": "two␊lines", "\x1b[31mred\ttab": "␛[31mred␉tab"}
"""A run label as typed (`--run-label $'two\\nlines'`) and as it is shown: one line, visible."""


@pytest.mark.parametrize("width", [40, 300])
def test_a_run_label_with_a_newline_or_escape_is_shown_on_one_line(
    run_cli: Callable[..., Run], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    """A newline in a label split its table row in two (or began a line that read as another
    run in the narrow view); an escape and a tab threw the table's widths off, cutting the label."""
    db = str(tmp_path / "s.db")
    for label in RUN_LABELS:
        assert run_cli("store", "import", str(TASK), "--store", db, "--run-label", label).code == 0
    with open_store(db) as store:
        ids = {run.label: run.id for run in store.runs()}
    monkeypatch.setattr(console, "width", width)
    listed = run_cli("store", "runs", "--store", db).out
    assert "\x1b" not in listed and "\t" not in listed
    lines = listed.splitlines()[1:]
    for label, shown in RUN_LABELS.items():
        (line,) = [line for line in lines if shown in line]
        if width == 40:  # the run's id line, then its indented line with scorer and label
            assert line.startswith("  ") and lines[lines.index(line) - 1].startswith(
                ids[label][:12]
            )
        else:
            assert ids[label][:12] in line
        assert len(line) <= width, line
        header = run_cli("store", "show", ids[label][:12], "--store", db).out
        assert f"· label {shown} ·" in " ".join(header.split()) and "\x1b" not in header
    table_rows = [line for line in lines if line.startswith("│")]
    assert width == 40 or len(table_rows) == len(RUN_LABELS)  # a row per run, none split


@pytest.mark.parametrize("width", [40, 300])
def test_store_show_keeps_a_trajectory_id_with_a_newline_on_its_line(
    run_cli: Callable[..., Run], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    db = str(tmp_path / "s.db")
    trajectories = read_paths([TASK]).trajectories[:2]
    for t in trajectories:
        t.id = f"{t.id}\nforged 1.0"
    with open_store(db) as store:
        run_id = store.save(
            StoredRun(kind="import", scorer=IMPORT_SCORER), trajectories,
            import_records(trajectories),
        )  # fmt: skip
    monkeypatch.setattr(console, "width", width)
    shown = run_cli("store", "show", run_id[:12], "--store", db).out
    assert [line for line in shown.splitlines() if "forged" in line.lstrip("│ ")[:6]] == []
    assert shown.count("␊forged") == len(trajectories)


def test_store_trajectory_to_a_file_says_what_it_wrote(
    run_cli: Callable[..., Run], store_url: str, tmp_path: Path
) -> None:
    """`store trajectory ID -o FILE` printed nothing: a user could not tell it had worked."""
    path = sorted(TASK.glob("*.json"))[0]
    assert run_cli("store", "import", str(path), "--store", store_url).code == 0
    (trajectory,) = read_paths([str(path)]).trajectories
    out = tmp_path / "t.jsonl"
    shown = run_cli("store", "trajectory", trajectory.id, "-o", str(out), "--store", store_url)
    assert shown.code == 0 and shown.out == ""  # stdout stays free for `-o /dev/stdout`
    steps = len(trajectory.steps)
    assert (
        " ".join(shown.err.split()) == f"wrote trajectory {trajectory.id} ({steps} steps) to {out}"
    )
