"""`agentlens report`: what it writes, which runs it picks, and its one-line errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.cli.conftest import Run as CliRun
from tests.conftest import BENCH
from tests.report._html import parse
from tests.report.conftest import TASKS, Store

RunCli = Callable[..., CliRun]


def test_writes_the_named_runs_into_a_new_folder(
    store: Store, run_cli: RunCli, tmp_path: Path
) -> None:
    out = tmp_path / "new" / "deeper" / "report.html"
    ids = [store.runs[TASKS[0]][:10], store.runs[f"import-{TASKS[1]}"]]
    result = run_cli("report", *ids, "--store", store.url, "-o", str(out))
    assert result.code == 0, result.err
    assert f"wrote {out}" in result.out.replace("\n", "")
    document = out.read_text()
    assert store.runs[TASKS[0]] in document and store.runs[f"import-{TASKS[1]}"] in document
    assert parse(document).problems == []


def test_without_a_run_id_reports_the_newest_score_run_and_says_so(
    store: Store, run_cli: RunCli, tmp_path: Path
) -> None:
    out = tmp_path / "r.html"
    result = run_cli("report", "--store", store.url, "-o", str(out))
    assert result.code == 0, result.err
    assert "newest score run" in result.err
    assert out.read_text().count('class="kind">score<') == 1


def test_kind_and_label_filters(store: Store, run_cli: RunCli, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert run_cli("report", "--kind", "import", "--store", store.url, "-o", str(out)).code == 0
    assert out.read_text().count('class="kind">import<') == 3
    assert run_cli("report", "--label", "psf*", "--store", store.url, "-o", str(out)).code == 0
    assert out.read_text().count('class="kind">score<') == 1


def test_unknown_run_id_is_one_line_and_exit_2(
    store: Store, run_cli: RunCli, tmp_path: Path
) -> None:
    out = tmp_path / "r.html"
    result = run_cli("report", "0123456789ab", "--store", store.url, "-o", str(out))
    assert result.code == 2
    assert result.err.strip().count("\n") == 0
    assert "no run '0123456789ab'" in result.err
    assert not out.exists()


def test_missing_store_and_unmatched_filter_are_one_line_errors(
    store: Store, run_cli: RunCli, tmp_path: Path
) -> None:
    missing = run_cli(
        "report", "--store", str(tmp_path / "none.db"), "-o", str(tmp_path / "r.html")
    )
    assert missing.code == 2 and "none.db: no such file" in missing.err
    assert not (tmp_path / "none.db").exists()
    unmatched = run_cli("report", "--label", "nothing*", "--store", store.url)
    assert unmatched.code == 2 and unmatched.err.strip().count("\n") == 0
    both = run_cli("report", "abc", "--kind", "score", "--store", store.url)
    assert both.code == 2 and "not both" in both.err


def test_every_kind_of_run_the_report_shows_can_be_chosen_by_kind(
    run_cli: RunCli, tmp_path: Path
) -> None:
    from agentlens.formats.stream import read_paths
    from agentlens.store import Metric, Record, Run, digest, open_store

    url = str(tmp_path / "s.db")
    (t,) = read_paths([str(next((BENCH / "trajectories" / TASKS[0]).glob("*.json")))]).trajectories
    verdict = [Metric(name="formal_passed", value=1.0), Metric(name="termination", label="done")]
    valued = [Metric(name="text:g_margin", value=0.25, step=0)]
    with open_store(url) as db:
        for kind, metrics in (("scenario", verdict), ("stepvalue", valued)):
            record = Record(trajectory=digest(t), trajectory_id=t.id, metrics=metrics)
            db.save(Run(kind=kind, scorer="x/1"), [t], [record])
    for kind in ("scenario", "stepvalue"):
        out = tmp_path / f"{kind}.html"
        result = run_cli("report", "--kind", kind, "--store", url, "-o", str(out))
        assert result.code == 0, result.err
        assert out.read_text().count(f'class="kind">{kind}<') == 1
