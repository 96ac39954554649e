"""`--evaluator provided`: asv.v1 steps that carry their own beliefs / raw scores (spec §2.1, the
released tool's provided-belief mode), scored without an LLM; expected values by hand (§6)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from agentlens.cli import main
from agentlens.errors import SchemaError
from agentlens.stepvalue.candidates import explicit_problems

IDS = ["anticoagulants", "statins", "none-of-the-above"]
RAW0 = {"anticoagulants": -1.2, "statins": -0.7, "none-of-the-above": -2.0}
RAW1 = {"anticoagulants": -0.1, "statins": -3.0, "none-of-the-above": -4.5}
B2 = {"anticoagulants": 0.7, "statins": 0.2, "none-of-the-above": 0.1}


def record() -> dict:
    candidates = [{"id": c, "text": c} for c in IDS]
    return {
        "schema_version": "asv.v1",
        "trajectory_id": "bio-1",
        "task": {
            "task_id": "bio-1",
            "question": "Which drug class reduces stroke risk in atrial fibrillation?",
            "candidate_space": {"candidates": candidates, "gold_candidate_id": "anticoagulants"},
        },
        "steps": [
            {
                "step_id": "s1",
                "index": 0,
                "action": {"type": "retrieve"},
                "state_after": {"evidence_facts": ["trial: warfarin"]},
                "raw_scores_before": RAW0,
                "raw_scores_after": RAW1,
            },
            {
                "step_id": "s2",
                "index": 1,
                "action": {"type": "extract"},
                "raw_scores_before": RAW1,
                "belief_after": B2,
            },
        ],
    }


def softmax(raw: dict[str, float]) -> dict[str, float]:
    z = sum(math.exp(v) for v in raw.values())
    return {k: math.exp(v) / z for k, v in raw.items()}


def expected(b0: dict, b1: dict, s0: dict, s1: dict) -> dict[str, float]:
    """Spec §6 by hand: entropy in nats, ε-smoothed KL(after‖before), lse margin on raw scores."""
    eps, k = 1e-6, len(IDS)

    def h(b: dict) -> float:
        return -sum(p * math.log(p) for p in b.values() if p > 0)

    def smooth(b: dict) -> dict:
        return {c: (1 - eps) * b[c] + eps / k for c in IDS}

    p, q = smooth(b1), smooth(b0)
    surprise = sum(p[c] * math.log(p[c] / q[c]) for c in IDS)

    def margin(s: dict) -> float:
        others = [s[c] for c in IDS if c != "anticoagulants"]
        return s["anticoagulants"] - math.log(sum(math.exp(v) for v in others))

    return {
        "delta_h": h(b0) - h(b1),
        "surprise": surprise,
        "g_margin": margin(s1) - margin(s0),
        "gold_ll_gain": math.log(b1["anticoagulants"]) - math.log(b0["anticoagulants"]),
    }


def test_provided_beliefs_are_scored_without_an_llm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "provided.asv.jsonl"
    path.write_text(json.dumps(record()) + "\n")
    out = tmp_path / "out"
    argv = ["stepvalue", "--candidates", str(path), "--evaluator", "provided", "--out", str(out)]
    assert main(argv) == 0
    assert "2 transitions, scored from the beliefs the file carries" in capsys.readouterr().out
    rows = [json.loads(line) for line in (out / "steps.jsonl").read_text().splitlines()]
    assert [r["channel"] for r in rows] == ["provided", "provided"]
    b1 = softmax(RAW1)
    first = expected(softmax(RAW0), b1, RAW0, RAW1)
    # step 2 has a belief after but no raw scores: its margin is read on log b (same lse margin)
    second = expected(b1, B2, RAW1, {c: math.log(v) for c, v in B2.items()})
    for row, want in zip(rows, (first, second), strict=True):
        for name, value in want.items():
            assert row[name] == pytest.approx(value, abs=1e-9), name
        assert row["net_asv"] == pytest.approx(want["delta_h"])  # λ = 0
        # the released tool's nested blocks, as its audit scripts read them
        components, gold = row["asv_components"], row["gold_metrics"]
        assert components["realized_entropy_reduction"] == pytest.approx(want["delta_h"])
        assert components["bayesian_surprise_kl"] == pytest.approx(want["surprise"])
        assert components["net_asv"] == pytest.approx(want["delta_h"])
        assert gold["gold_margin_gain"] == pytest.approx(want["g_margin"])
        assert gold["gold_log_likelihood_gain"] == pytest.approx(want["gold_ll_gain"])
        assert row["quality_flags"]["used_floor_score"] is False
    h_before = -sum(p * math.log(p) for p in softmax(RAW0).values())
    assert rows[0]["asv_components"]["entropy_before_nats"] == pytest.approx(h_before)
    assert [r["action"]["type"] for r in rows] == ["retrieve", "extract"]
    assert rows[0]["gold_rank_before"] == 2 and rows[0]["gold_rank_after"] == 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary["evaluator"] == "provided" and summary["costs"]["evaluator_calls"] == 0
    assert summary["floor_sensitivity"][0]["note"].startswith("provided beliefs")
    phases = {p["phase"] for p in summary["phases"]}
    assert {"retrieve", "extract", "group:external_evidence"} <= phases


def test_provided_values_must_cover_every_candidate(tmp_path: Path) -> None:
    rec = record()
    del rec["steps"][1]["raw_scores_before"]
    path = tmp_path / "bad.asv.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    with pytest.raises(SchemaError, match="step s2: belief_before or raw_scores_before"):
        explicit_problems(path)
    rec = record()
    rec["steps"][0]["raw_scores_after"] = {"statins": 0.0}
    path.write_text(json.dumps(rec) + "\n")
    with pytest.raises(SchemaError, match="raw_scores_after must give every candidate id"):
        explicit_problems(path)


def test_provided_evaluator_needs_beliefs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = record()
    for step in rec["steps"]:
        for name in ("raw_scores_before", "raw_scores_after", "belief_after"):
            step.pop(name, None)
    path = tmp_path / "plain.asv.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    argv = ["stepvalue", "--candidates", str(path), "--evaluator", "provided"]
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    assert "--evaluator provided needs belief_before/after" in capsys.readouterr().err


def test_one_hot_provided_beliefs_give_finite_margins(tmp_path: Path) -> None:
    """Saturated beliefs (spec §6.6) that put 0 on the gold: the margin on log b floors b at
    1e-12 (ε_gold, as the oracle gain does), so G stays finite and the run does not crash; the
    gold log-likelihood gain of such a step is null (as in the authors' code) and left out of
    the channel mean."""
    one_hot = {c: float(c == "statins") for c in IDS}
    gold_hot = {c: float(c == "anticoagulants") for c in IDS}
    rec = record()
    rec["steps"] = [
        {"step_id": "s1", "index": 0, "belief_before": one_hot, "belief_after": gold_hot},
        {"step_id": "s2", "index": 1, "belief_before": gold_hot, "belief_after": one_hot},
        {"step_id": "s3", "index": 2, "belief_before": B2, "raw_scores_after": RAW1},
    ]
    path = tmp_path / "one-hot.asv.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    out = tmp_path / "out"
    argv = ["stepvalue", "--candidates", str(path), "--evaluator", "provided", "--out", str(out)]
    assert main(argv) == 0
    rows = [json.loads(line) for line in (out / "steps.jsonl").read_text().splitlines()]
    floor = math.log(1e-12)
    lse_floor = math.log(2 * 1e-12)  # the two other candidates, both at the floor
    # s1: margin before = floor − lse(0, floor) ≈ floor; after = 0 − lse(floor, floor)
    assert rows[0]["g_margin"] == pytest.approx(-lse_floor - floor, abs=1e-9)
    assert rows[1]["g_margin"] == pytest.approx(lse_floor + floor, abs=1e-9)
    assert rows[0]["repair"] and rows[1]["damage"]
    assert [r["gold_metrics"]["gold_log_likelihood_gain"] for r in rows[:2]] == [None, None]
    summary = json.loads((out / "summary.json").read_text())
    (means,) = summary["channels"]
    assert means["mean_g_margin"] == pytest.approx(sum(r["g_margin"] for r in rows) / 3)
    assert means["mean_gold_ll_gain"] == pytest.approx(rows[2]["gold_ll_gain"])


def test_a_hostile_trajectory_id_stays_text_in_report_md(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An id with HTML, a link and a table pipe went into report.md's tables raw: live markup in
    a Markdown viewer, and a broken table."""
    doc = record()
    doc["trajectory_id"] = "run<img src=x onerror=alert(1)>[x](javascript:alert(1))|cell"
    path = tmp_path / "hostile.asv.jsonl"
    path.write_text(json.dumps(doc) + "\n")
    out = tmp_path / "out"
    argv = ["stepvalue", "--candidates", str(path), "--evaluator", "provided", "--out", str(out)]
    assert main(argv) == 0
    report = (out / "report.md").read_text()
    assert "<img" not in report and not re.search(r"(?<!\\)\]\(", report)  # no live link
    assert r"run&lt;img src=x onerror=alert(1)&gt;\[x\](javascript:alert(1))\|cell" in report
    trajectory_rows = report.split("## Per trajectory")[1].split("\n\n")[1].splitlines()
    assert {row.count(" | ") for row in trajectory_rows[2:]} == {9}  # 10 cells, none split
