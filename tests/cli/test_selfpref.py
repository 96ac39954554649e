from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def sxs_doc(scores: dict[str, int | None]) -> dict[str, object]:
    cells = [{"task": task, "forward": score} for task, score in scores.items()]
    return {"dimensions": {"ToolCalls": {"cells": cells}}}


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
