"""`cohort --out/--select`: what a user asks for is checked before scoring, and `all` is all."""

from __future__ import annotations

import csv
import json
import sys
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
        # a folder that is a file: found only when the rows were written, after all the scoring
        ("--out", "a-file/rows.jsonl", "a-file is a file, not a folder"),
    ],
)
def test_a_bad_select_or_out_stops_before_any_scoring(
    option: str, value: str, message: str, tmp_path: Path, run_cli: Callable[..., Run]
) -> None:
    out = ["--out", str(tmp_path / "rows.jsonl")] if option == "--select" else []
    value = str(tmp_path / value) if option == "--out" else value
    (tmp_path / "a-file").write_text("")
    result = run_cli("cohort", str(JAVA), "--boot", "20", *out, option, value)
    assert result.code == 2
    assert message in result.err and "Traceback" not in result.err
    assert result.out == ""  # no tables: nothing was scored first
    assert "not scored" not in result.err and [p.name for p in tmp_path.iterdir()] == ["a-file"]


def test_parquet_out_without_pyarrow_stops_before_any_scoring(
    tmp_path: Path, run_cli: Callable[..., Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the parquet extra, the install hint comes first, not after the whole cohort ran
    (46 s on the dev traces) and its tables were lost."""
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as if not installed
    result = run_cli("cohort", str(JAVA), "--boot", "20", "--out", str(tmp_path / "rows.parquet"))
    assert result.code == 2
    assert "pip install 'agentlens[parquet]'" in result.err and "Traceback" not in result.err
    assert result.out == "" and "not scored" not in result.err
    assert list(tmp_path.iterdir()) == []


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
    assert tiered + unknown == doc["n_runs"]
    assert f"Tiers ({tiered} runs; 2 unlabelled runs not tiered)" in text  # not 2 of the tiered
    assert "2 runs with no pass/fail label left out" in text


def test_rows_with_a_store_is_refused_not_ignored(
    tmp_path: Path, run_cli: Callable[..., Run]
) -> None:
    """`--rows CSV` scores nothing, so `--store` had nothing to save and was silently dropped."""
    store = tmp_path / "s.db"
    result = run_cli("cohort", "--rows", str(RELEASE_ROWS), "--store", str(store))
    assert result.code == 2 and "--rows CSV scores none" in result.err
    assert not store.exists()


def test_release_rows_are_judged_by_the_profile_that_scored_them(
    run_cli: Callable[..., Run],
) -> None:
    """The release's CSV holds sdk-compat scores and tiers, but `cohort --rows` judged them with
    the default profile's boundary (70.7 then): its curation table called 88.9 % of the passes Lucky
    where the CSV's own tier column says 20.3 %, beside a validity table titled `calibrated`."""
    doc = json.loads(run_cli("cohort", "--rows", str(RELEASE_ROWS), "--json", "--boot", "20").out)
    passing = sum(doc["tiers"][t] for t in ("ideal", "solid", "lucky"))
    everything = next(c for c in doc["curation"] if c["selection"] == "all")
    assert everything["lucky_percent"] == pytest.approx(100 * doc["tiers"]["lucky"] / passing)
    assert (doc["validity"]["profile"], doc["validity"]["boundary"]) == ("sdk-compat", 40)


def test_rows_written_by_out_are_read_back_with_their_profile(
    tmp_path: Path, run_cli: Callable[..., Run]
) -> None:
    """`--out` rows carry a `profile` column: `--rows` applies that profile, and says so when a
    --profile given on the command line re-tiers them with other thresholds."""
    rows = tmp_path / "rows.csv"
    assert (
        run_cli("cohort", str(JAVA), "--profile", "paper", "--no-tables", "--out", str(rows)).code
        == 0
    )
    doc = json.loads(run_cli("cohort", "--rows", str(rows), "--json", "--boot", "20").out)
    assert doc["validity"]["profile"] == "paper"
    given = run_cli("cohort", "--rows", str(rows), "--boot", "20", "--profile", "calibrated")
    assert given.code == 0
    assert (
        f"{rows}: rows scored with 'paper'; the tables apply the thresholds of 'calibrated'"
        in given.err
    )


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet", ".PARQUET"])
def test_rows_written_as_jsonl_or_parquet_are_read_back_too(
    suffix: str, tmp_path: Path, run_cli: Callable[..., Run]
) -> None:
    """`--rows` promises the rows `--out` wrote, and `--out` writes three formats; only CSV was
    read (`rows.jsonl: not an annotation CSV: no column 'trajectory_id'`, exit 2)."""
    rows = tmp_path / f"rows{suffix}"
    scored = run_cli("cohort", str(JAVA), "--profile", "paper", "--no-tables", "--out", str(rows))
    assert scored.code == 0
    result = run_cli("cohort", "--rows", str(rows), "--json", "--boot", "20")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc["validity"]["profile"] == "paper" and doc["n_runs"] == 21


def test_rows_without_a_tier_column_are_refused_in_one_line(
    tmp_path: Path, run_cli: Callable[..., Run]
) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"trajectory_id": "a", "passed": True}) + "\n")
    result = run_cli("cohort", "--rows", str(rows))
    assert result.code == 2 and "Traceback" not in result.err
    assert f"{rows}: line 1: no 'quality_tier'" in result.err


def test_model_names_are_whole_in_the_model_table(run_cli: Callable[..., Run]) -> None:
    """At 80 columns the model column cut names to 12 characters ("gpt-5.2-cod…"), so models
    that differ after that (a dated snapshot, a size) read as one; a long name now wraps."""
    out = run_cli("cohort", "--rows", str(RELEASE_ROWS), "--boot", "20").out
    table = out.split("Models: pass rate")[1].split("Waste prevalence")[0]
    cells = "".join(line.split("│")[1].strip() for line in table.splitlines() if "│" in line)
    assert "…" not in table
    with RELEASE_ROWS.open() as fh:
        models = {r["model"] for r in csv.DictReader(fh)}
    assert all(model in cells for model in models), cells


def test_a_run_copied_twice_is_named_not_silently_its_own_donor(
    tmp_path: Path, run_cli: Callable[..., Run]
) -> None:
    """A task's folder copied into a sub-folder (a backup, a re-download) doubles every run:
    leave-one-out then makes each copy the other's donor, and the dev task's Ideal runs went
    from 3 to 16 of 74 without a word."""
    task = BENCH / "trajectories" / "psf__requests-1724"
    files = sorted(task.glob("*.json"))
    for folder in (tmp_path / "a", tmp_path / "a" / "backup"):
        folder.mkdir()
        for f in files[:6]:
            (folder / f.name).write_bytes(f.read_bytes())
    result = run_cli("cohort", str(tmp_path / "a"), "--no-tables")
    assert result.code == 0
    lines = [line for line in result.err.splitlines() if "same content" in line]
    assert len(lines) == 6, result.err
    for f in files[:6]:
        assert any(f"a/{f.name}" in line and f"backup/{f.name}" in line for line in lines)


@pytest.mark.parametrize("suffix", ["jsonl", "csv"])
def test_a_run_never_evaluated_has_no_passed_value_in_the_rows(
    suffix: str, tmp_path: Path, run_cli: Callable[..., Run]
) -> None:
    """Two swe-agent-java runs were never evaluated: their rows said `passed: false` beside
    `outcome: unknown`, a failure to whoever reads the column alone. `passed` is now null (an
    empty CSV cell), and true or false only for a recorded outcome."""
    out = tmp_path / f"rows.{suffix}"
    assert run_cli("cohort", str(JAVA), "--no-tables", "--out", str(out)).code == 0
    if suffix == "jsonl":
        rows = [json.loads(line) for line in out.read_text().splitlines()]
    else:
        with out.open(newline="") as fh:
            rows = list(csv.DictReader(fh))
    no_value, true, false = (None, True, False) if suffix == "jsonl" else ("", "True", "False")
    want = {"unknown": no_value, "passed": true, "failed": false}
    assert [r["passed"] for r in rows] == [want[r["outcome"]] for r in rows]
    assert sum(r["outcome"] == "unknown" for r in rows) == 2
