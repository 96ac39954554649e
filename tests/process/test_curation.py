"""Curation selections and exports on the release's dev annotation rows."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from agentlens.errors import ConfigError
from agentlens.process import curation
from agentlens.process.cohort import read_annotation_rows
from tests.conftest import BENCH

CSV = BENCH / "annotations" / "trajectories.csv"


@pytest.fixture(scope="module")
def rows() -> list[dict[str, object]]:
    return read_annotation_rows(CSV)


@pytest.fixture(scope="module")
def passing_scores() -> list[float]:
    with CSV.open() as fh:
        return sorted(
            (float(r["quality_score"]) for r in csv.DictReader(fh) if r["passed"] == "True"),
            reverse=True,
        )


def test_top_k_takes_the_best_passing_runs(
    rows: list[dict[str, object]], passing_scores: list[float]
) -> None:
    top = curation.top_k(rows, 25)
    assert len(top) == 25 and all(r["passed"] for r in top)
    assert [r["quality_score"] for r in top] == passing_scores[:25]
    assert curation.select(rows, "top-25") == top


def test_drop_lucky(rows: list[dict[str, object]]) -> None:
    kept = curation.drop_lucky(rows)
    n_pass = sum(1 for r in rows if r["passed"])
    n_lucky = sum(1 for r in rows if r["passed"] and r["quality_tier"] == "lucky")
    assert len(kept) == n_pass - n_lucky
    assert all(r["quality_tier"] != "lucky" for r in kept)


def test_curation_table(rows: list[dict[str, object]], passing_scores: list[float]) -> None:
    table = {c.selection: c for c in curation.curation_table(rows)}
    everything = table["all"]
    assert everything.n == len(passing_scores)
    assert everything.ideal_percent == pytest.approx(
        100 * sum(s >= 70 for s in passing_scores) / len(passing_scores)
    )
    assert everything.lucky_percent == pytest.approx(
        100 * sum(s < 47 for s in passing_scores) / len(passing_scores)
    )
    assert everything.min_score == passing_scores[-1]
    assert table["top-25"].min_score == passing_scores[24]
    assert table["top-25"].lucky_percent == 0
    assert table["drop-lucky"].lucky_percent == 0


def test_unknown_selection_is_a_user_error(rows: list[dict[str, object]]) -> None:
    with pytest.raises(ConfigError):
        curation.select(rows, "best")


@pytest.mark.parametrize("suffix", ["jsonl", "csv", "parquet"])
def test_export_round_trip(rows: list[dict[str, object]], tmp_path: Path, suffix: str) -> None:
    top = curation.top_k(rows, 10)
    out = curation.export_rows(top, tmp_path / f"top.{suffix}")
    if suffix == "jsonl":
        back = [json.loads(line) for line in out.read_text().splitlines()]
    elif suffix == "csv":
        back = read_annotation_rows(out)
    else:
        import pyarrow.parquet as pq

        back = pq.read_table(out).to_pylist()
    assert [r["trajectory_id"] for r in back] == [r["trajectory_id"] for r in top]
    assert [r["quality_score"] for r in back] == [r["quality_score"] for r in top]
    assert set(back[0]) == set(top[0])
