"""A cohort's rows go whole to a file as each task finishes; in memory stay only the columns the
tables read, unboxed (`process.cohort_table`, issue 25). What comes back is exactly what went in."""

from __future__ import annotations

import math
from array import array

import orjson

from agentlens.cli.cohort_cmd import score_cohort
from agentlens.formats.stream import read_paths
from agentlens.process.cohort_rows import result_row
from agentlens.process.cohort_runs import read_cohort
from agentlens.process.cohort_table import KEPT, Rows, RowTable, full_rows
from agentlens.process.protocols import score_splits, split_cohort
from tests.conftest import BENCH

FOLDER = str(BENCH / "trajectories" / "psf__requests-1724")


def test_values_come_back_with_their_types() -> None:
    rows = [
        {"composite": 61.5, "tokens": 2**70, "model": "m", "passed": True, "extra": [1, "x"]},
        {"composite": math.nan, "tokens": 12, "model": None, "passed": False},
        {"composite": 3, "tokens": None, "model": "m", "extra": math.inf},
    ]
    table = RowTable()
    indices = [table.append(row) for row in rows]
    views = Rows(table, indices)
    for row, view in zip(rows, views, strict=True):
        assert repr(dict(view)) == repr(row)  # NaN, 2**70, an int among floats: as they were
        assert {k: view[k] for k in row}.keys() == row.keys()
        assert view.get("passed", "absent") == row.get("passed", "absent")
        assert view.get("quality_tier", "absent") == "absent"
    assert type(views[2]["composite"]) is int and type(views[0]["composite"]) is float
    assert repr(list(full_rows(views))) == repr(rows)


def test_a_cohort_keeps_its_rows_in_a_file_and_arrays() -> None:
    """The rows `cohort` gets are views of a `RowTable`: whole rows equal to `result_row` of the
    in-memory scoring, the floats and ints of the kept columns in arrays (8 bytes a run)."""
    runs = read_paths([FOLDER]).trajectories
    expected = [result_row(r) for r in score_splits(split_cohort(runs, "agentlens-bench"), "paper")]
    with read_cohort([FOLDER]) as (_, spill):
        rows, failed = score_cohort(spill.refs, "agentlens-bench", "paper", k=None, seed=42,
                                    spill=spill)  # fmt: skip
    assert not failed and isinstance(rows, Rows)
    assert [orjson.dumps(r) for r in full_rows(rows)] == [orjson.dumps(r) for r in expected]
    assert [dict(r) for r in rows] == expected
    columns = rows.table._columns
    assert set(columns) == set(KEPT)
    for name in ("composite", "struct", "cov", "coh", "temp", "n_states", "total_wasted_steps"):
        assert isinstance(columns[name].values, array), name
    assert len(rows) == len(expected) == 32


def test_rows_only_written_back_keep_no_column_in_memory() -> None:
    """`cohort --no-tables --out` (nothing reads the rows but the export): the same rows, read
    whole from the file, with no column held per run."""
    with read_cohort([FOLDER]) as (_, spill):
        kept, _ = score_cohort(spill.refs, "agentlens-bench", "paper", k=None, seed=42,
                               spill=spill)  # fmt: skip
        bare, failed = score_cohort(spill.refs, "agentlens-bench", "paper", k=None, seed=42,
                                    spill=spill, tables=False)  # fmt: skip
    assert not failed and isinstance(bare, Rows) and bare.table._columns == {}
    assert [orjson.dumps(r) for r in full_rows(bare)] == [orjson.dumps(r) for r in full_rows(kept)]
    assert [dict(r) for r in bare] == [dict(r) for r in kept]
