from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.conftest import BENCH, FORMATS

TASK = "psf__requests-1724"


def test_glob_and_json_lines_match_the_files(run_cli: Callable[..., object]) -> None:
    pattern = str(BENCH / "trajectories" / TASK / "*-pass-*.json")
    expected = sorted(str(p) for p in (BENCH / "trajectories" / TASK).glob("*-pass-*.json"))
    result = run_cli("inspect", "--json", pattern)
    assert result.code == 0  # type: ignore[attr-defined]
    rows = [json.loads(line) for line in result.out.splitlines()]  # type: ignore[attr-defined]
    assert sorted(r["path"] for r in rows) == expected
    assert {r["outcome"] for r in rows} == {"passed"}
    for row in rows:
        raw = json.loads(Path(row["path"]).read_bytes())
        assert row["tool_calls"] == len(raw["states"]) - 1


def test_directory_walk_skips_sidecars_and_labels_outcomes(run_cli: Callable[..., object]) -> None:
    gemini = FORMATS / "gemini-cli"
    result = run_cli("inspect", "--json", str(gemini))
    assert result.code == 0  # type: ignore[attr-defined]
    (row,) = [json.loads(line) for line in result.out.splitlines()]  # type: ignore[attr-defined]
    assert row["format"] == "gemini-cli"


def test_explicit_labels_show_their_source(run_cli: Callable[..., object]) -> None:
    task_dir = BENCH / "trajectories" / TASK
    labels = BENCH / "annotations" / "trajectories.csv"
    result = run_cli("inspect", "--json", "--labels", str(labels), str(task_dir))
    rows = [json.loads(line) for line in result.out.splitlines()]  # type: ignore[attr-defined]
    assert len(rows) == len(list(task_dir.glob("*.json")))
    assert {r["outcome_source"] for r in rows} == {"labels:csv"}


def test_missing_labels_file_is_a_one_line_error(run_cli: Callable[..., object]) -> None:
    result = run_cli("inspect", "--labels", "/nonexistent/labels.csv", str(BENCH / "trajectories"))
    assert result.code == 2  # type: ignore[attr-defined]
    assert result.err.strip().splitlines() == [  # type: ignore[attr-defined]
        "error: --labels /nonexistent/labels.csv: no such file or directory"
    ]
