from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def sxs_doc(scores: dict[str, int | None], **fields: object) -> dict[str, object]:
    cells = [{"task": task, "forward": score} for task, score in scores.items()]
    return {"dimensions": {"ToolCalls": {"cells": cells}}, **fields}


def test_selfpref_counts_cells_where_each_judge_favours_its_family(
    run_cli: Callable[..., object], tmp_path: Path
) -> None:
    # Judge 1 (agent A's family) says A better on task a (-2); judge 2 says B better (+1):
    # the judges disagree and each leans to its own family -> 1 self-favouring of 2 scored cells.
    one, two = tmp_path / "judge1.json", tmp_path / "judge2.json"
    one.write_text(json.dumps(sxs_doc({"a": -2, "b": 1, "c": None})))
    two.write_text(json.dumps(sxs_doc({"a": 1, "b": 2, "c": 3})))
    result = run_cli("selfpref", str(one), str(two), "--json")
    assert result.code == 0  # type: ignore[attr-defined]
    out = json.loads(result.out)  # type: ignore[attr-defined]
    assert out["cells"] == 2
    assert out["disagree_rate"] == 0.5
    assert out["self_favouring_rate"] == 0.5
    assert out["other_favouring_rate"] == 0.0


def test_selfpref_rejects_a_file_that_is_not_an_sxs_document(
    run_cli: Callable[..., object], tmp_path: Path
) -> None:
    bad = tmp_path / "reviews.json"
    bad.write_text("[1, 2]")
    result = run_cli("selfpref", str(bad), str(bad))
    assert result.code == 2  # type: ignore[attr-defined]
    assert "not an `agentlens sxs --out` document" in result.err  # type: ignore[attr-defined]


def test_selfpref_refuses_runs_judged_in_the_other_order(
    run_cli: Callable[..., object], tmp_path: Path
) -> None:
    """Judge 2's file with the runs swapped (`sxs runs/b runs/a`) flips every sign: each judge's
    own-family leaning was counted as the other's. It is refused; other mismatches warn."""
    one, two = tmp_path / "judge1.json", tmp_path / "judge2.json"
    same = {"run_a": "runs/a", "run_b": "runs/b"}
    one.write_text(json.dumps(sxs_doc({"a": -2, "b": 1}, **same, judge="gpt")))
    two.write_text(
        json.dumps(sxs_doc({"a": 1, "b": 2}, run_a="runs/b", run_b="runs/a", judge="claude"))
    )
    swapped = run_cli("selfpref", str(one), str(two))
    assert swapped.code == 2  # type: ignore[attr-defined]
    assert "the other way round" in swapped.err  # type: ignore[attr-defined]
    # the same runs named another way (`./runs/b`) are the same runs, as `compare` reads them
    two.write_text(json.dumps(sxs_doc({"a": 1}, run_a="./runs/b", run_b="runs/a/", judge="claude")))
    assert run_cli("selfpref", str(one), str(two)).code == 2  # type: ignore[attr-defined]
    two.write_text(json.dumps(sxs_doc({"a": 1}, run_a="./runs/a", run_b="runs/b", judge="claude")))
    named = run_cli("selfpref", str(one), str(two))
    assert "different runs" not in named.err  # type: ignore[attr-defined]
    two.write_text(
        json.dumps(sxs_doc({"a": 1, "b": 2}, run_a="runs/c", run_b="runs/b", judge="gpt"))
    )
    other = run_cli("selfpref", str(one), str(two))
    assert other.code == 0  # type: ignore[attr-defined]
    assert "warning: the two files judged different runs" in other.err  # type: ignore[attr-defined]
    assert "warning: both files were judged by gpt" in other.err  # type: ignore[attr-defined]
