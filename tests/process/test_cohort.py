"""Cohort tables on the release's own dev annotation rows, against values computed here from the
raw CSV text with the csv module alone."""

from __future__ import annotations

import csv
import itertools
import json
from collections import defaultdict

import pytest

from agentlens.process import cohort
from tests.conftest import BENCH

CSV = BENCH / "annotations" / "trajectories.csv"


@pytest.fixture(scope="module")
def raw() -> list[dict[str, str]]:
    with CSV.open() as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def rows() -> list[dict[str, object]]:
    return cohort.read_annotation_rows(CSV)


def test_rows_are_typed(rows: list[dict[str, object]], raw: list[dict[str, str]]) -> None:
    assert len(rows) == len(raw) == 399
    first = rows[0]
    assert isinstance(first["passed"], bool) and isinstance(first["n_states"], int)
    assert isinstance(first["coherence_score"], float) and isinstance(first["model"], str)
    assert len(first) == 40


def test_model_table(rows: list[dict[str, object]], raw: list[dict[str, str]]) -> None:
    by_model: dict[str, list[dict[str, str]]] = defaultdict(list)
    for r in raw:
        by_model[r["model"]].append(r)
    want = {}
    for model, rs in by_model.items():
        ps = [r for r in rs if r["passed"] == "True"]
        mean = sum(float(r["quality_score"]) for r in ps) / len(ps)
        lucky = sum(r["quality_tier"] == "lucky" for r in ps)
        want[model] = (len(rs), len(ps), mean, lucky)
    by_rate = sorted(want, key=lambda m: -want[m][1] / want[m][0])
    by_score = sorted(want, key=lambda m: -want[m][2])
    table = cohort.model_table(rows)
    assert [t.model for t in table] == by_score
    for t in table:
        n, n_pass, mean, lucky = want[t.model]
        assert (t.trajectories, t.passing, t.lucky) == (n, n_pass, lucky)
        assert t.mean_score_passing == pytest.approx(mean)
        assert t.pass_rank == by_rate.index(t.model) + 1
        assert t.rank_shift == t.pass_rank - t.score_rank
        assert t.lucky_percent == pytest.approx(100 * lucky / n_pass)


def test_waste_tables(rows: list[dict[str, object]], raw: list[dict[str, str]]) -> None:
    passing = [r for r in raw if r["passed"] == "True"]
    failing = [r for r in raw if r["passed"] == "False"]
    table = {
        w.kind: w
        for w in cohort.waste_table(
            [r for r in rows if r["passed"]], [r for r in rows if not r["passed"]]
        )
    }
    for kind in cohort.WASTE_KINDS:
        hit_p = [r for r in passing if int(r[f"{kind}_count"]) > 0]
        hit_f = [r for r in failing if int(r[f"{kind}_count"]) > 0]
        row = table[kind]
        assert row.prevalence_a == pytest.approx(100 * len(hit_p) / len(passing))
        assert row.prevalence_b == pytest.approx(100 * len(hit_f) / len(failing))
        assert row.waste_b == pytest.approx(
            sum(int(r[f"{kind}_waste"]) for r in hit_f) / len(hit_f)
        )
        assert row.ratio == pytest.approx(row.prevalence_b / row.prevalence_a)


def test_mechanisms_cover_every_lucky_pass(
    rows: list[dict[str, object]], raw: list[dict[str, str]]
) -> None:
    lucky = [r for r in raw if r["passed"] == "True" and r["quality_tier"] == "lucky"]
    table = cohort.mechanism_table(rows)
    assert sum(sum(c.values()) for c in table.values()) == len(lucky)
    c1 = [
        r
        for r in lucky
        if int(r["n_states"]) <= 8
        and int(r["total_wasted_steps"]) == 0
        and float(r["stage_coverage_V"]) == 0
    ]
    assert cohort.c1_count(rows) == len(c1) > 0
    c3 = [
        r
        for r in lucky
        if r not in c1
        and int(r["total_wasted_steps"]) < 5
        and int(r["n_states"]) < 40
        and "incomplete_implementation"
        in {x["reason"] for x in json.loads(r["failure_reasons"] or "[]")}
    ]
    assert sum(c["C3"] for c in table.values()) == len(c3)


def test_separation_and_process_only(
    rows: list[dict[str, object]], raw: list[dict[str, str]]
) -> None:
    seps = {
        s.signal: s
        for s in cohort.separation_table(rows, ("cov", "composite", "process_only"), n_boot=200)
    }

    def brute(column: str, leak: float) -> float:
        pos = [float(r[column]) - leak for r in raw if r["passed"] == "True"]
        neg = [float(r[column]) for r in raw if r["passed"] == "False"]
        wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p, n in itertools.product(pos, neg))
        return wins / (len(pos) * len(neg))

    assert seps["cov"].auroc == pytest.approx(brute("coverage_percent", 0))
    assert seps["composite"].auroc == pytest.approx(brute("quality_score", 0))
    assert seps["process_only"].auroc == pytest.approx(brute("quality_score", 10))
    assert seps["process_only"].auroc < seps["composite"].auroc


def test_tiers(rows: list[dict[str, object]], raw: list[dict[str, str]]) -> None:
    counts = cohort.tiers(rows)
    assert sum(counts.values()) == len(raw)
    assert counts["lucky"] == sum(r["quality_tier"] == "lucky" for r in raw)
