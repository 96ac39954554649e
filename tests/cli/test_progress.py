"""Progress bars are drawn for a person at a terminal, and leave nothing in a log or a pipe."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.cli.conftest import Run
from tests.conftest import BENCH

TASK = BENCH / "trajectories" / "psf__requests-1724"


def test_cohort_into_a_log_says_one_whole_line_and_no_empty_ones(
    tmp_path: Path, run_cli: Callable[..., Run]
) -> None:
    result = run_cli("cohort", str(TASK), "--no-tables", "--out", str(tmp_path / "rows.jsonl"))
    assert result.code == 0
    # was "\n" (the scoring bar's last line), then the message cut at 80 columns before the path
    assert result.err == f"wrote 37 rows → {tmp_path / 'rows.jsonl'}\n", repr(result.err)


def test_reading_many_files_into_a_pipe_prints_only_the_results(
    run_cli: Callable[..., Run],
) -> None:
    result = run_cli("inspect", str(BENCH / "trajectories"), "--json")
    assert result.code == 0
    assert result.err == "", repr(result.err[:200])  # was "\n": the reading bar (≥ 50 files)
