"""Import and review runs: per-model steps and tokens; per-dimension means and unscored rates."""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path

import pytest

from agentlens.formats.stream import read_paths
from agentlens.report import render_report
from agentlens.reviews import DIMENSIONS
from agentlens.store import Run, open_store
from agentlens.store.records import import_records
from tests.conftest import DATA
from tests.report._html import card_groups, find_table, parse
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


def test_import_run_shows_unknown_tokens_as_unknown_and_cents_below_a_cent(
    tmp_path: Path,
) -> None:
    """Chat message lists without usage say nothing about tokens: that is unknown, not 0 tokens
    (the table said median 0, total 0 and the log plot drew them at 1). A $0.00135 run is not
    "$0.0"."""
    messages = read_paths([str(DATA / "formats" / "openai-messages")]).trajectories
    silent = [t for t in messages if all(s.usage is None for s in t.steps) and not t.reported_usage]
    golden = DATA / "formats" / "atif-harbor-golden" / "tests" / "golden" / "openhands"
    cheap = read_paths([str(golden / "hello-world.trajectory.json")]).trajectories
    assert silent
    assert [round(t.cost_total() or 0, 5) for t in cheap] == [0.00135]
    url = str(tmp_path / "s.db")
    with open_store(url) as db:
        silent_run = db.save(Run(kind="import", scorer="import/1"), silent, import_records(silent))
        cheap_run = db.save(Run(kind="import", scorer="import/1"), cheap, import_records(cheap))
        assert all(r.metric("tokens") is None for r in db.records(silent_run))
        document = render_report(db, [silent_run])
        cheap_document = render_report(db, [cheap_run])
    tree = parse(document)
    assert card_groups(tree)[0]["tokens"] == "–"
    rows = find_table(tree, "model", "trajectories")[1:]
    assert rows and all(row[5] == row[6] == "–" for row in rows)
    assert "No trajectory of this run reports token counts." in document
    assert document.count("<svg") == 1  # the steps plot only: no empty token axis
    (row,) = find_table(parse(cheap_document), "model", "trajectories")[1:]
    assert row[7] == "0.0014"


def test_swe_agent_tokens_come_from_its_model_stats(tmp_path: Path) -> None:
    """SWE-agent steps carry no usage; the file's `info.model_stats` totals are the tokens."""
    import json

    paths = sorted((DATA / "swe-agent-java").rglob("*.traj"))[:5]
    java = read_paths([str(p) for p in paths]).trajectories
    assert java and all(s.usage is None for t in java for s in t.steps)
    with open_store(str(tmp_path / "s.db")) as db:
        records = db.records(
            db.save(Run(kind="import", scorer="import/1"), java, import_records(java))
        )
    for path, record in zip(paths, records, strict=True):
        stats = json.loads(path.read_text())["info"]["model_stats"]
        expected = stats["tokens_sent"] + stats["tokens_received"]
        tokens = record.metric("tokens")
        assert tokens is not None and tokens.value == expected


def test_a_single_waste_instance_is_not_plural(store: Store) -> None:
    with open_store(store.url) as db:
        for run in db.runs(kind="score"):
            document = render_report(db, [run.id])
            assert " 1 instances" not in document and " 1 wasted steps" not in document
            if "· 1 instance<" in document:
                return
    pytest.skip("no stored score run has a waste kind with exactly one instance")


def test_tied_models_share_a_rank_and_the_places_they_take_are_skipped() -> None:
    """A model with no value (no run with a pass/fail label) has no rank: ranked last, it read as
    "four models did better" beside a pass rate of "–"."""
    from agentlens.report.scores import _ranks

    assert _ranks({"a": 0.9, "b": 0.9, "c": 0.9, "d": 0.5, "e": None}) == {
        "a": 1, "b": 1, "c": 1, "d": 4, "e": None,
    }  # fmt: skip


def test_import_pass_rate_leaves_unlabelled_trajectories_out(tmp_path: Path) -> None:
    """Chat message lists carry no pass/fail label: they are not failures of the pass rate."""
    bench = sorted(
        (DATA / "agentlens-bench-dev" / "trajectories" / "psf__requests-1724").glob("*.json")
    )
    mixed = read_paths([str(p) for p in bench[:6]] + [str(DATA / "formats" / "openai-messages")])
    trajectories = mixed.trajectories
    labelled = [t for t in trajectories if t.outcome.status in ("passed", "failed")]
    passed = sum(t.outcome.status == "passed" for t in labelled)
    assert 0 < len(labelled) < len(trajectories) and passed
    with open_store(str(tmp_path / "s.db")) as db:
        run = db.save(
            Run(kind="import", scorer="import/1"), trajectories, import_records(trajectories)
        )
        cards = card_groups(parse(render_report(db, [run])))[0]
    assert cards["pass rate"] == f"{100 * passed / len(labelled):.1f}%"
    assert cards["labelled"] == f"{100 * len(labelled) / len(trajectories):.1f}%"
