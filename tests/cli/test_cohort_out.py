"""`cohort --out/--select`: what a user asks for is checked before scoring, and `all` is all."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.conftest import Run
from tests.conftest import BENCH, DATA

RELEASE_ROWS = BENCH / "annotations" / "trajectories.csv"
JAVA = DATA / "swe-agent-java"


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--select", "best", "unknown selection 'best'"),
        ("--select", "top-x", "unknown selection 'top-x'"),
        ("--out", "rows.txt", "unknown export format 'txt'"),
    ],
)
def test_a_bad_select_or_out_stops_before_any_scoring(
    option: str, value: str, message: str, tmp_path: Path, run_cli: Callable[..., Run]
) -> None:
    out = ["--out", str(tmp_path / "rows.jsonl")] if option == "--select" else []
    value = str(tmp_path / value) if option == "--out" else value
    result = run_cli("cohort", str(JAVA), "--boot", "20", *out, option, value)
    assert result.code == 2
    assert message in result.err and "Traceback" not in result.err
    assert result.out == ""  # no tables: nothing was scored first
    assert "not scored" not in result.err and not list(tmp_path.iterdir())


def test_rows_out_all_writes_every_row_as_scoring_does(
    tmp_path: Path, run_cli: Callable[..., Run]
) -> None:
    out = tmp_path / "rows.jsonl"
    result = run_cli("cohort", "--rows", str(RELEASE_ROWS), "--no-tables", "--out", str(out))
    assert result.code == 0
    with RELEASE_ROWS.open() as fh:
        expected = [r["trajectory_id"] for r in csv.DictReader(fh)]
    written = [json.loads(line)["trajectory_id"] for line in out.read_text().splitlines()]
    assert sorted(written) == sorted(expected)  # the failing runs too
    assert f"wrote {len(expected)} rows" in result.err


def test_runs_with_no_pass_fail_label_are_out_of_pass_rates_and_tiers(
    run_cli: Callable[..., Run],
) -> None:
    """Two swe-agent-java runs were never evaluated (`unknown`): they are scored, but neither
    pass nor fail, so no pass rate counts them as failures and no tier holds them."""
    doc = json.loads(run_cli("cohort", str(JAVA), "--boot", "20", "--json").out)
    unknown = doc["n_runs"] - doc["validity"]["n_pass"] - doc["validity"]["n_fail"]
    assert unknown == 2
    for model in doc["models"]:
        labelled = model["trajectories"] - model["unknown"]
        assert model["pass_rate"] == pytest.approx(100 * model["passing"] / labelled)
    assert sum(m["unknown"] for m in doc["models"]) == unknown
    text = run_cli("cohort", str(JAVA), "--boot", "20").out
    tiered = sum(doc["tiers"].values())
    assert f"Tiers ({tiered} runs; 2 with no pass/fail label)" in text
    assert "2 runs with no pass/fail label left out" in text


def test_rows_with_a_store_is_refused_not_ignored(
    tmp_path: Path, run_cli: Callable[..., Run]
) -> None:
    """`--rows CSV` scores nothing, so `--store` had nothing to save and was silently dropped."""
    store = tmp_path / "s.db"
    result = run_cli("cohort", "--rows", str(RELEASE_ROWS), "--store", str(store))
    assert result.code == 2 and "--rows CSV scores none" in result.err
    assert not store.exists()
