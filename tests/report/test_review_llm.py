"""A review run made by the real local judge (SmolLM2-135M on llama.cpp, in process), reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlens.cli import main
from agentlens.report import render_report
from agentlens.store import open_store
from tests.conftest import BENCH
from tests.report._html import find_table, parse

TRACE = (
    BENCH
    / "trajectories"
    / "psf__requests-1724"
    / ("psf__requests-1724-logs-gemini-2.5-pro-pass-24943628310_pta.json")
)


@pytest.mark.llm
def test_a_real_review_run_renders_with_its_unscored_rate(
    local_gguf_path: Path, tmp_path: Path
) -> None:
    url = str(tmp_path / "store.db")
    args = ["review", str(TRACE), "--judge", f"llamacpp:{local_gguf_path}", "--dimension",
            "EndResult", "--budget-tokens", "1200", "--max-tokens", "120", "--store", url]  # fmt: skip
    # 1: a judge call failed outright; 4: no scored answer (both still stored as unscored)
    assert main(args) in (0, 1, 4)
    with open_store(url) as db:
        (run,) = db.runs(kind="review")
        (record,) = db.records(run.id)
        document = render_report(db, [run.id])
    metric = record.metric("review:EndResult")
    assert metric is not None
    (row,) = find_table(parse(document), "dimension", "mean")[1:]
    scored = metric.value is not None
    assert row[:4] == ["EndResult", f"{metric.value:.2f}" if scored else "–",
                       str(int(scored)), str(int(not scored))]  # fmt: skip
    assert row[4] == ("0%" if scored else "100%")
    assert run.scorer in document
