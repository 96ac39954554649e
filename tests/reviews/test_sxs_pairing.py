"""SxS pairing of runs with repeats, on real AgentLens-Bench dev traces: two "runs" are two models'
trajectories of the same tasks (3–6 repeats per task each). Expected pairs and unpaired ids are
computed here from the file names (task folder, file stem), not by the pairing code."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from agentlens.cli import main
from agentlens.formats.stream import read_paths
from agentlens.jsonio import dump
from agentlens.reviews.documents import reviews_document
from agentlens.reviews.judge.judge import DimensionReview, TrajectoryReview
from agentlens.reviews.sxs.cell import Cell
from agentlens.reviews.sxs.judge_pairs import MAX_POOL, paired_differences, select_tasks
from agentlens.reviews.sxs.pairing import key_order, pair_runs
from agentlens.reviews.sxs.stats import score_flags
from tests.conftest import BENCH

TRAJS = BENCH / "trajectories"
MODEL_A, MODEL_B = "gemini-2.5-pro", "gpt-5.3-codex"


def run_files(model: str) -> list[Path]:
    return sorted(TRAJS.glob(f"*/*-logs-{model}-*.json"))


def stems_by_task(files: list[Path]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for f in files:
        out[f.parent.name].append(f.stem)
    return {task: sorted(stems) for task, stems in out.items()}


@pytest.fixture(scope="module")
def runs():
    files_a, files_b = run_files(MODEL_A), run_files(MODEL_B)
    return files_a, files_b, read_paths(files_a).trajectories, read_paths(files_b).trajectories


def expected_pairs(files_a: list[Path], files_b: list[Path]):
    a, b = stems_by_task(files_a), stems_by_task(files_b)
    pairs, unpaired_a, unpaired_b = {}, [], []
    for task in sorted(set(a) | set(b)):
        sa, sb = a.get(task, []), b.get(task, [])
        n = min(len(sa), len(sb))
        for i in range(n):
            key = task if max(len(sa), len(sb)) == 1 else f"{task}#{i}"
            pairs[key] = (sa[i], sb[i])
        unpaired_a += sa[n:]
        unpaired_b += sb[n:]
    return pairs, unpaired_a, unpaired_b


def test_repeats_are_paired_by_position_and_nothing_is_dropped(runs) -> None:
    files_a, files_b, trajs_a, trajs_b = runs
    pairs, unpaired_a, unpaired_b = expected_pairs(files_a, files_b)
    assert len(pairs) > MAX_POOL  # the dev data has more pairs than the §8.4 cut
    paired = pair_runs(trajs_a, trajs_b)
    got = {k: (paired.a.trajectories[k].id, paired.b.trajectories[k].id) for k in paired.keys}
    assert got == pairs
    assert (paired.unpaired_a, paired.unpaired_b) == (unpaired_a, unpaired_b)
    # lossless: every trajectory is in a pair or listed as unpaired
    assert len(pairs) + len(unpaired_a) == len(files_a)
    assert len(pairs) + len(unpaired_b) == len(files_b)
    info = paired.to_dict()
    assert (info["pairs"], info["unpaired_a"], info["unpaired_b"]) == (
        len(pairs),
        len(unpaired_a),
        len(unpaired_b),
    )
    assert info["tasks"] == len({k.split("#")[0] for k in pairs})


def scored_review(traj, dims: list[str]) -> TrajectoryReview:
    reviews = {d: DimensionReview(d, 1.0, None, None, "", 0) for d in dims}
    return TrajectoryReview(traj.id, traj.task_id, len(traj.steps), 0, 0, reviews)


def test_selection_works_on_pair_keys_complete_first(runs) -> None:
    _, _, trajs_a, trajs_b = runs
    dims = ["ToolCalls"]
    plain = pair_runs(trajs_a, trajs_b)
    # complete = reviewed on both sides: the pairs of the last task in sorted order
    last_task = max(t.task_id for t in trajs_a)
    complete = sorted(k for k in plain.keys if k.startswith(f"{last_task}#"))
    ids = {plain.a.trajectories[k].id for k in complete} | {
        plain.b.trajectories[k].id for k in complete
    }
    reviews_a = [scored_review(t, dims) for t in trajs_a if t.id in ids]
    reviews_b = [scored_review(t, dims) for t in trajs_b if t.id in ids]
    paired = pair_runs(trajs_a, trajs_b, reviews_a, reviews_b)
    assert sorted(paired.a.reviews) == sorted(paired.b.reviews) == complete
    chosen = select_tasks(paired.a, paired.b, dims)
    assert len(chosen) == MAX_POOL < len(paired.keys)
    assert set(complete) <= set(chosen)  # complete pairs come first, so survive the cut
    assert chosen == sorted(chosen, key=lambda k: (k.split("#")[0], int(k.split("#")[1])))
    assert key_order("t#2") < key_order("t#10")


def cell(task: str, score: int) -> Cell:
    return Cell(task, "ToolCalls", score, score)


def test_task_mean_pairing_averages_repeats_first() -> None:
    cells = [cell("t#0", 5), cell("t#1", -5), cell("u", 5), Cell("v#0", "ToolCalls", None, None)]
    assert paired_differences(cells, "repeat") == [1.0, -1.0, 1.0, None]
    assert paired_differences(cells, "task-mean") == [0.0, 1.0, None]
    # repeat: mean of (1, −1, 1) = 0.3333; task-mean: mean of (0, 1) = 0.5
    assert score_flags(paired_differences(cells, "repeat")).mean == 0.3333
    assert score_flags(paired_differences(cells, "task-mean")).mean == 0.5


@pytest.mark.llm
def test_sxs_command_pairs_repeats_with_local_model(
    local_llm_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    config = tmp_path / "agentlens.yaml"
    config.write_text("llm:\n  timeout_s: 600\n  max_concurrency: 1\n")
    monkeypatch.setenv("AGENTLENS_CONFIG", str(config))
    task = TRAJS / "sphinx-doc__sphinx-10323"
    files_a = sorted(task.glob("*-logs-gpt-4.1-*.json"))
    files_b = sorted(task.glob("*-logs-gpt-4o-*.json"))
    assert (len(files_a), len(files_b)) == (2, 5)
    empty = tmp_path / "reviews.json"
    dump(reviews_document("none", []), empty)  # no single-run reviews: both shown as Unknown
    capsys.readouterr()
    args = [str(task / "*-logs-gpt-4.1-*"), str(task / "*-logs-gpt-4o-*")]
    args += ["--reviews-a", str(empty), "--reviews-b", str(empty), "--judge", local_llm_url]
    args += ["--dimension", "ToolCalls", "--no-swap", "--budget-tokens", "400"]
    code = main(["sxs", *args, "--max-tokens", "48", "--no-cache", "--json"])
    doc = json.loads(capsys.readouterr().out)
    scored = doc["dimensions"]["ToolCalls"]["scored_tasks"]
    assert code == (0 if scored else 4)  # 4: the 135M model scored no comparison
    pairing = doc["pairing"]
    assert (pairing["pairs"], pairing["unpaired_a"], pairing["unpaired_b"]) == (2, 0, 3)
    assert pairing["unpaired_b_ids"] == [f.stem for f in files_b[2:]]
    cells = doc["dimensions"]["ToolCalls"]["cells"]
    assert [(c["task"], c["trajectory_a"], c["trajectory_b"]) for c in cells] == [
        (f"{task.name}#{i}", files_a[i].stem, files_b[i].stem) for i in range(2)
    ]
    for c in cells:
        (comparison,) = c["comparisons"]  # forward order only
        assert (comparison["score"] is None) == (comparison["unscored_reason"] is not None)
        assert "provider error" not in (comparison["unscored_reason"] or "")
