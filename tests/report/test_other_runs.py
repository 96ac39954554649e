"""Import and review runs: per-model steps and tokens; per-dimension means and unscored rates."""

from __future__ import annotations

import statistics
from collections import defaultdict

from agentlens.report import render_report
from agentlens.reviews import DIMENSIONS
from agentlens.store import open_store
from tests.report._html import find_table, parse
from tests.report.conftest import TASKS, Store


def test_import_run_shows_steps_and_tokens_by_model(store: Store) -> None:
    label = f"import-{TASKS[0]}"
    with open_store(store.url) as db:
        records = db.records(store.runs[label])
        document = render_report(db, [store.runs[label]])
    steps: dict[str, list[float]] = defaultdict(list)
    tokens: dict[str, float] = defaultdict(float)
    for r in records:
        step, token = r.metric("steps"), r.metric("tokens")
        assert step and step.value is not None and token and token.value is not None
        steps[r.model or ""].append(step.value)
        tokens[r.model or ""] += token.value
    rows = {row[0]: row for row in find_table(parse(document), "model", "trajectories")[1:]}
    assert set(rows) == set(steps)
    for model, values in steps.items():
        assert rows[model][1] == str(len(values))
        middle = statistics.median(values)
        assert rows[model][3] == (f"{middle:,.0f}" if middle.is_integer() else f"{middle:,.1f}")
        assert rows[model][6] == f"{int(tokens[model]):,}"
    assert document.count("<svg") == 2  # steps and tokens box plots


def test_review_run_shows_means_without_the_unscored(store: Store) -> None:
    label = next(k for k in store.runs if k.startswith("hostile-review"))
    with open_store(store.url) as db:
        records = db.records(store.runs[label])
        document = render_report(db, [store.runs[label]])
    tree = parse(document)
    rows = {row[0]: row for row in find_table(tree, "dimension", "mean")[1:]}
    assert list(rows) == list(DIMENSIONS)
    for dim in DIMENSIONS:
        metrics = [m for r in records if (m := r.metric(f"review:{dim}"))]
        scored = [m.value for m in metrics if m.value is not None]
        assert rows[dim][2:4] == [str(len(scored)), str(len(metrics) - len(scored))]
        expected = f"{statistics.fmean(scored):.2f}" if scored else "–"
        assert rows[dim][1] == expected
        assert rows[dim][4] == f"{100 * (len(metrics) - len(scored)) / len(metrics):.0f}%"
    assert rows["Pitfalls"][4] == "100%"
    per_trajectory = find_table(tree, "trajectory", "task")
    assert per_trajectory[0][4:] == list(DIMENSIONS)
    assert [row[0] for row in per_trajectory[1:]] == [r.trajectory_id for r in records]
    assert all(row[4 + DIMENSIONS.index("Pitfalls")] == "unscored" for row in per_trajectory[1:])
