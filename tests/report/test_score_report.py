"""The numbers a score-run report prints, against values computed here from the stored records."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from pathlib import Path

import orjson

from agentlens.cli import main
from agentlens.process.cohort import model_table
from agentlens.report import render_report
from agentlens.store import Record, open_store
from tests.conftest import BENCH
from tests.report._html import card_groups, find_table, parse
from tests.report.conftest import TASKS, Store


def _records(store: Store, label: str) -> list[Record]:
    with open_store(store.url) as db:
        return db.records(store.runs[label])


def _ranked(store: Store, label: str) -> list[Record]:
    """The records the report's figures count: all but the in-sample donors."""
    records = _records(store, label)
    ranked = [r for r in records if not r.body["in_sample"]]
    assert 0 < len(ranked) < len(records)  # the store's runs score their reference's donors too
    return ranked


def _trajectory_id(cell: str) -> str:
    return cell.removesuffix(" (in-sample)")


def _render(store: Store, *labels: str) -> str:
    with open_store(store.url) as db:
        return render_report(db, [store.runs[label] for label in labels])


def _score(r: Record) -> float:
    metric = r.metric("score")
    assert metric is not None and metric.value is not None
    return metric.value


def test_headline_numbers_match_the_records(store: Store) -> None:
    records = _ranked(store, TASKS[0])
    (cards,) = card_groups(parse(_render(store, TASKS[0])))
    labelled = [r for r in records if r.outcome in ("passed", "failed")]
    passed = sum(r.outcome == "passed" for r in labelled)
    assert cards["trajectories"] == str(len(records))
    assert cards["pass rate"] == f"{100 * passed / len(labelled):.1f}%"
    assert cards["mean score"] == f"{statistics.fmean(map(_score, records)):.1f}"
    assert cards["median score"] == f"{statistics.median(map(_score, records)):.1f}"
    tiers = Counter(m.label for r in records if (m := r.metric("tier")))
    for tier in ("ideal", "solid", "lucky", "partial_fail", "off_track"):
        assert cards[tier.replace("_", " ")] == str(tiers[tier])


def test_models_are_ranked_by_mean_score_of_passing_runs_beside_pass_rate(store: Store) -> None:
    """Quality is judged on passing runs only, as `cohort` (the paper's Table 2) does: a mean over
    every run would count each failure's low score, so the two ranks would mostly repeat each
    other."""
    records = _ranked(store, TASKS[1])
    passing: dict[str, list[float]] = defaultdict(list)
    outcomes: dict[str, list[str]] = defaultdict(list)
    for r in records:
        outcomes[r.model or ""].append(r.outcome or "")
        if r.outcome == "passed":
            passing[r.model or ""].append(_score(r))
    rows = find_table(parse(_render(store, TASKS[1])), "quality rank")
    assert rows[0][:6] == [
        "quality rank",
        "model",
        "runs",
        "mean score (passing)",
        "median score (passing)",
        "pass rate",
    ]
    shown = {row[1]: row for row in rows[1:]}
    assert set(shown) == set(outcomes)
    assert any(outcomes[m].count("failed") and passing[m] for m in outcomes)  # the case at stake
    for model, values in passing.items():
        passed = outcomes[model].count("passed") / len(outcomes[model])
        assert shown[model][2] == str(len(outcomes[model]))
        assert shown[model][3] == f"{statistics.fmean(values):.1f}"
        assert shown[model][4] == f"{statistics.median(values):.1f}"
        assert shown[model][5] == f"{100 * passed:.1f}%"
    means = [float(row[3]) for row in rows[1:] if row[3] != "–"]
    assert means == sorted(means, reverse=True)
    assert rows[1][0] == "1"


def test_model_ranks_agree_with_cohort_on_the_same_run(tmp_path: Path) -> None:
    """`cohort --store` then `report` on that run: the report's quality and pass-rate ranks are the
    ones `cohort` printed (its Table 2), model by model."""
    folder = str(BENCH / "trajectories" / TASKS[0])
    url, out = str(tmp_path / "store.db"), tmp_path / "rows.jsonl"
    args = ["cohort", folder, "--protocol", "agentlens-bench", "--no-tables"]
    assert main([*args, "--store", url, "--out", str(out)]) == 0
    rows = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    expected = {m.model: m for m in model_table(rows)}
    with open_store(url) as db:
        (run,) = db.runs()
        shown = find_table(parse(render_report(db, [run.id])), "quality rank")[1:]
    assert {row[1] for row in shown} == set(expected)
    for rank, model, _, mean, *_, pass_rank in shown:
        assert int(rank) == expected[model].score_rank, model
        assert mean == f"{expected[model].mean_score_passing:.1f}", model
        assert int(pass_rank) == expected[model].pass_rank, model


def test_tier_by_outcome_table_counts_every_record(store: Store) -> None:
    records = _ranked(store, TASKS[0])
    rows = find_table(parse(_render(store, TASKS[0])), "tier", "passed")
    expected = Counter((m.label, r.outcome) for r in records if (m := r.metric("tier")))
    for row in rows[1:-1]:
        assert int(row[1]) == expected[(row[0], "passed")]
        assert int(row[2]) == expected[(row[0], "failed")]
    assert rows[-1][-1] == str(len(records))


def test_signal_means_and_waste_and_mechanisms(store: Store) -> None:
    records = _ranked(store, TASKS[0])
    document = _render(store, TASKS[0])
    tree = parse(document)
    by_model: dict[str, list[float]] = defaultdict(list)
    for r in records:
        metric = r.metric("coh")
        assert metric is not None and metric.value is not None
        by_model[r.model or ""].append(metric.value)
    rows = {row[0]: row for row in find_table(tree, "model", "struct")[1:]}
    for model, values in by_model.items():
        assert rows[model][3] == f"{statistics.fmean(values):.3f}"
    blind = sum(r.body["waste"]["blind_retry"]["steps"] for r in records)
    assert f"blind_retry: {blind} wasted steps" in document
    mechanisms = Counter(m.label for r in records if (m := r.metric("mechanism")))
    shown = {row[0]: int(row[1]) for row in find_table(tree, "mechanism", "runs")[1:]}
    assert shown == dict(mechanisms)


def test_each_trajectory_has_a_row_with_its_reason_as_tooltip(store: Store) -> None:
    records = _records(store, TASKS[0])
    document = _render(store, TASKS[0])
    rows = find_table(parse(document), "trajectory", "task")
    assert sorted(_trajectory_id(row[0]) for row in rows[1:]) == sorted(
        r.trajectory_id for r in records
    )
    for r in records[:5]:
        metric = r.metric("score")
        assert metric is not None and metric.reason
        escaped = metric.reason.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        assert f'title="{escaped}"' in document


def test_runs_sharing_trajectories_get_a_comparison(store: Store) -> None:
    paper, sdk = _records(store, TASKS[0]), _records(store, "sdk")
    document = _render(store, TASKS[0], "sdk")
    rows = find_table(parse(document), "trajectory", "model")
    assert rows[0][-2:] == ["Δ score", "tiers"]
    sdk_scores = {r.trajectory_id: _score(r) for r in sdk}
    expected = {r.trajectory_id: sdk_scores[r.trajectory_id] - _score(r) for r in paper}
    assert len(rows) - 1 == len(expected)
    for row in rows[1:]:
        assert row[-2] == f"{expected[row[0]]:+.1f}"
    assert "All score runs" in document


def test_each_run_shows_its_facts(store: Store) -> None:
    document = _render(store, TASKS[0], f"import-{TASKS[1]}")
    with open_store(store.url) as db:
        run = db.run(store.runs[TASKS[0]])
    for fact in (run.id, run.scorer, run.label, run.agentlens_version, "settings.profile"):
        assert f"<dd>{fact}</dd>" in document or f"<dt>{fact}</dt>" in document
    assert run.settings["reference"] in document


def test_each_trajectory_shows_its_wasted_steps(store: Store) -> None:
    """Under the default profile a record held two metrics named `waste`: the composite's
    wasted-steps share (0.39) first, then the count (7); the report took the first and printed
    int(0.39) = 0 for runs with 7 or 11 wasted steps."""
    records = _records(store, TASKS[0])
    wasted = {r.trajectory_id: r.body["annotation"]["total_wasted_steps"] for r in records}
    assert sum(1 for n in wasted.values() if n) >= 5  # real waste to show, not all zeros
    for r in records:
        assert [m.name for m in r.metrics].count("waste") == 1
    rows = find_table(parse(_render(store, TASKS[0])), "trajectory", "task")
    head = rows[0]
    for row in rows[1:]:
        assert row[head.index("waste")] == str(wasted[_trajectory_id(row[0])]), row[0]


def _marks(html: str) -> list[str]:
    """The names of the dashed threshold marks of the (first) score histogram."""
    import re
    from html import unescape

    histogram = html.split('aria-label="histogram of')[1].split("</svg>")[0]
    found = re.findall(r'stroke-dasharray="4 3"/><text[^>]*><title>([^<]*)</title>', histogram)
    return [unescape(name) for name in found]


def test_histogram_marks_the_tier_thresholds_of_the_run_profile(store: Store) -> None:
    """Tiers are score thresholds, and the histogram never showed where they fall; each mark is
    read from the profile that scored the run (its settings)."""
    from agentlens.process.profiles import CALIBRATED, SDK_COMPAT

    default = CALIBRATED
    assert _marks(_render(store, TASKS[0])) == [
        f"boundary {default.lucky_below:g}: {default.lucky_below:g}",
        f"ideal ≥ {default.ideal_min:g}: {default.ideal_min:g}",
    ]
    sdk = SDK_COMPAT  # a pass is Lucky below 47, a failure Partial-fail from 40
    assert _marks(_render(store, "sdk")) == [
        f"partial-fail ≥ {sdk.partial_fail_min:g}: {sdk.partial_fail_min:g}",
        f"lucky < {sdk.lucky_below:g}: {sdk.lucky_below:g}",
        f"ideal ≥ {sdk.ideal_min:g}: {sdk.ideal_min:g}",
    ]


def test_a_score_is_shown_on_its_side_of_the_tier_threshold(tmp_path: Path) -> None:
    """Under paper a pallets__flask-5014 pass scoring 46.994 is Lucky (below 47); the report's
    table showed it as 47.0 beside "lucky". It shows 46.99, as `score` and the tier reason do."""
    task = BENCH / "trajectories" / "pallets__flask-5014"
    run = task / "pallets__flask-5014-logs-gpt-5.2-codex-pass-25003569993_pta.json"
    ref, url = tmp_path / "ref.json", str(tmp_path / "store.db")
    assert main(["reference", "build", str(task), "--profile", "paper", "-o", str(ref)]) == 0
    assert main(["score", str(run), "--reference", str(ref), "--store", url]) == 0
    with open_store(url) as db:
        page = render_report(db, [db.runs()[0].id])
    rows = find_table(parse(page), "trajectory", "task")
    assert rows[1][4:6] == ["46.99", "lucky"], rows


def test_donors_are_marked_and_left_out_of_the_figures(store: Store) -> None:
    """The README's steps score a task's folder against a reference built from 5 of its runs:
    those donors, scored against graphs built from themselves, topped the trajectory table (99.3,
    ideal) unmarked and counted in every figure. Now one line counts them, the figures leave them
    out, and the table lists them last, marked."""
    records = _records(store, TASKS[0])
    donors = {r.trajectory_id for r in records if r.body["in_sample"]}
    assert donors == set(orjson.loads(store.refs[TASKS[0]].read_bytes())["donors"])
    document = _render(store, TASKS[0])
    assert f"{len(donors)} of {len(records)} runs were donors" in " ".join(document.split())
    rows = find_table(parse(document), "trajectory", "task")[1:]
    marked = [row[0] for row in rows if row[0].endswith(" (in-sample)")]
    assert {_trajectory_id(cell) for cell in marked} == donors
    assert [row[0] for row in rows[-len(donors) :]] == marked  # ranked apart, after the others
    models = find_table(parse(document), "quality rank")[1:]
    assert sum(int(row[2]) for row in models) == len(records) - len(donors)


def test_a_run_of_donors_only_draws_no_figure(tmp_path: Path) -> None:
    task = BENCH / "trajectories" / TASKS[0]
    ref, url = tmp_path / "ref.json", str(tmp_path / "store.db")
    assert main(["reference", "build", str(task), "-o", str(ref)]) == 0
    donors = [str(task / f"{d}.json") for d in orjson.loads(ref.read_bytes())["donors"]]
    assert main(["score", *donors, "--reference", str(ref), "--store", url]) == 0
    with open_store(url) as db:
        document = render_report(db, [db.runs()[0].id])
    assert "no figure or ranking" in " ".join(document.split())
    assert "quality rank" not in document
    rows = find_table(parse(document), "trajectory", "task")[1:]
    assert len(rows) == len(donors) and all(row[0].endswith(" (in-sample)") for row in rows)
