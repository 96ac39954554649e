"""A run read from a trace cut short (its last line incomplete: a session still being written) is
scored from the lines before the cut; `score`'s table, `score --json`, `cohort --out` rows and
the HTML report say so (`truncated_at_line`), and the released 40 columns stay as they were.
The cut trace is a real Claude Code session from ../shared/data, copied with its last line cut."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from agentlens.formats.stream import read_paths
from agentlens.process.cohort_rows import result_row
from agentlens.process.pta_io import read_reference
from agentlens.process.result import ANNOTATION_COLUMNS
from agentlens.process.score import score_trajectory
from tests.cli.conftest import Run
from tests.conftest import BENCH, FORMATS

SESSION = FORMATS / "claude-code" / "marot-spotter" / "short.jsonl"
REQUESTS = BENCH / "trajectories" / "psf__requests-1724"


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from agentlens.cli import main

    out = tmp_path_factory.mktemp("ref") / "ref.json"
    assert main(["reference", "build", str(REQUESTS), "-o", str(out)]) == 0
    return out


def _cut_copy(folder: Path) -> tuple[Path, int]:
    """`SESSION` with its last line cut in half: (the copy, that line's number)."""
    lines = [line for line in SESSION.read_bytes().splitlines() if line.strip()]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / SESSION.name
    half = lines[-1][: len(lines[-1]) // 2]
    path.write_bytes(b"".join(line + b"\n" for line in lines[:-1]) + half)
    return path, len(lines)


@pytest.mark.parametrize("width", [80, 200])  # lines for a narrow terminal, else the table
def test_score_marks_a_run_scored_from_a_cut_trace(
    run_cli: Callable[..., Run],
    reference: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    width: int,
) -> None:
    from agentlens.cli._app import console

    monkeypatch.setattr(console, "width", width)
    cut, line = _cut_copy(tmp_path / "runs")
    wide = run_cli("score", str(cut), "--reference", str(reference))
    assert wide.code == 0
    assert f"(cut at line {line})" in wide.out
    doc = json.loads(run_cli("score", str(cut), "--reference", str(reference), "--json").out)
    assert doc["truncated_at_line"] == line
    whole = json.loads(run_cli("score", str(SESSION), "--reference", str(reference), "--json").out)
    assert whole["truncated_at_line"] is None


def test_cohort_rows_carry_the_cut_line_and_the_40_columns_do_not(
    reference: Path, tmp_path: Path
) -> None:
    cut, line = _cut_copy(tmp_path / "runs")
    ref = read_reference(reference)
    (cut_run,) = read_paths([cut]).trajectories
    (whole_run,) = read_paths([SESSION]).trajectories
    cut_result = score_trajectory(cut_run, ref, "sdk-compat")
    assert result_row(cut_result)["truncated_at_line"] == line
    assert result_row(score_trajectory(whole_run, ref, "sdk-compat"))["truncated_at_line"] is None
    assert list(cut_result.annotation_row()) == list(ANNOTATION_COLUMNS)


def test_report_notes_runs_scored_from_cut_traces(
    run_cli: Callable[..., Run], reference: Path, tmp_path: Path
) -> None:
    cut, line = _cut_copy(tmp_path / "runs")
    store, out = f"sqlite:///{tmp_path / 'store.db'}", tmp_path / "report.html"
    assert run_cli("score", str(cut), "--reference", str(reference), "--store", store).code == 0
    assert run_cli("report", "--store", store, "-o", str(out)).code == 0
    html = out.read_text()
    assert "1 of 1 run was scored from a trace cut short" in html
    assert f"(cut at line {line})" in html


def test_score_of_a_canonical_dump_cut_while_written_marks_no_run_cut(
    run_cli: Callable[..., Run], reference: Path, tmp_path: Path
) -> None:
    """Each line of `convert --to jsonl` output is a whole run: cut while written, its last run
    is lost (one warning naming the cut file and line) and the runs before it are whole, so
    `score` says 'cut at line' of none of them (a run per line, as OpenHands' output.jsonl)."""
    runs = FORMATS / "openhands" / "eval-output" / "resolver_mock_output.jsonl"
    assert run_cli("convert", "--to", "jsonl", "-o", str(tmp_path / "dump"), str(runs)).code == 0
    (dump,) = (tmp_path / "dump").glob("*.jsonl")
    lines = dump.read_bytes().splitlines()
    cut = tmp_path / "cut" / dump.name
    cut.parent.mkdir()
    cut.write_bytes(b"".join(line + b"\n" for line in lines[:-1]) + lines[-1][:1000])
    result = run_cli("score", str(cut), "--reference", str(reference), "--json")
    assert result.code == 0
    scored = [json.loads(line) for line in result.out.splitlines()]
    assert [s["truncated_at_line"] for s in scored] == [None] * (len(lines) - 1)
    assert f"{cut}: line {len(lines)}: last line is incomplete (1000 bytes)" in result.err
