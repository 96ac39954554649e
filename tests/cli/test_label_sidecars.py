"""Hostile `--labels` files: a harness report whose `resolved` is no bool must not label a run
(`"false"` is truthy), and a CSV whose header names a column twice is ambiguous; both are one line
naming the file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.conftest import Run
from tests.conftest import FORMATS

SESSION = FORMATS / "gemini-cli"


@pytest.mark.parametrize("verdict", ["false", None, [1], 0])
def test_a_report_whose_resolved_is_no_bool_is_refused(
    verdict: object, tmp_path: Path, run_cli: Callable[..., Run]
) -> None:
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"task-1": {"resolved": verdict, "tests_status": {}}}))
    result = run_cli("inspect", "--labels", str(report), str(SESSION))
    assert result.code == 2, result.err
    assert result.err.strip() == (
        f"error: {report}: task-1: 'resolved' must be true or false, not {verdict!r}"
    )


def test_a_label_csv_with_a_column_given_twice_is_refused(
    tmp_path: Path, run_cli: Callable[..., Run]
) -> None:
    labels = tmp_path / "labels.csv"
    labels.write_text("trajectory_id,label,label\nx,passed,failed\n")
    result = run_cli("inspect", "--labels", str(labels), str(SESSION))
    assert result.code == 2, result.err
    assert result.err.strip() == f"error: {labels}: column 'label' given twice in the header"
