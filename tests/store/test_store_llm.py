"""`review --store` and `stepvalue evaluate --store` on the real local model (in-process
llama.cpp), checked against what the same commands write to their own files."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from agentlens.store import open_store
from tests.cli.conftest import Run
from tests.conftest import BENCH

pytestmark = pytest.mark.llm
TASK = BENCH / "trajectories" / "psf__requests-1724"


def _shortest(n: int) -> list[Path]:
    return sorted(TASK.glob("*.json"), key=lambda p: (p.stat().st_size, p.name))[:n]


def test_review_store_keeps_each_dimension_score(
    run_cli: Callable[..., Run], local_gguf_path: Path, tmp_path: Path
) -> None:
    db, out = str(tmp_path / "s.db"), tmp_path / "reviews.json"
    result = run_cli(
        "review", *map(str, _shortest(1)), "--judge", f"llamacpp:{local_gguf_path}",
        "--dimension", "ToolCalls", "--budget-tokens", "500", "--max-tokens", "64",
        "--out", str(out), "--store", db, "--run-label", "smoke",
    )  # fmt: skip
    assert result.code in (0, 1, 4), result.err  # 4: its one answer unscored
    doc = json.loads(out.read_text())
    with open_store(db) as store:
        (run,) = store.runs(kind="review")
        records = store.records(run.id)
    assert run.label == "smoke" and run.scorer.startswith("judge/llamacpp:")
    assert run.summary["summary"] == doc["summary"]
    expected = {t["trajectory_id"]: t["reviews"]["ToolCalls"] for t in doc["trajectories"]}
    assert {r.trajectory_id for r in records} == set(expected)
    for record in records:
        metric = record.metric("review:ToolCalls")
        assert metric is not None
        assert metric.value == expected[record.trajectory_id]["score"]
        assert metric.label == expected[record.trajectory_id]["status"]


def test_stepvalue_store_keeps_every_step_value(
    run_cli: Callable[..., Run], local_gguf_path: Path, tmp_path: Path
) -> None:
    db, out = str(tmp_path / "s.db"), tmp_path / "sv"
    (trace,) = _shortest(1)
    result = run_cli(
        "stepvalue", str(trace), "--candidates", "outcome", "--evaluator",
        f"llamacpp:{local_gguf_path}", "--channels", "direct", "-b", "1", "--max-steps", "2",
        "--out", str(out), "--no-cache", "--store", db,
    )  # fmt: skip
    assert result.code == 0, result.err
    rows = [json.loads(line) for line in (out / "steps.jsonl").read_text().splitlines()]
    with open_store(db) as store:
        (run,) = store.runs(kind="stepvalue")
        (record,) = store.records(run.id)
    assert run.settings["channels"] == ["direct"]
    stored = {(m.name, m.step): m.value for m in record.metrics}
    expected = {
        (f"direct:{name}", row["index"]): row[name]
        for row in rows
        if row["slice"] == "full" and not row["missing"]
        for name in ("delta_h", "surprise", "g_margin")
    }
    assert expected and stored == expected

    from agentlens.report import render_report

    with open_store(db) as store:
        page = render_report(store, [run.id])
    deltas = [row["delta_h"] for row in rows if row["slice"] == "full" and not row["missing"]]
    mean_dh = f"{sum(deltas) / len(deltas):,.3f}"
    assert (
        f'<td>direct</td><td class="num">{len(deltas)}</td><td class="num">{mean_dh}</td>' in page
    )
