from __future__ import annotations

import json
from pathlib import Path

from agentlens.formats import detect, read_path
from tests.conftest import BENCH

TRACES = sorted((BENCH / "trajectories").glob("*/*.json"))


def test_all_dev_traces_detected_and_counted() -> None:
    assert len(TRACES) == 399
    labels = 0
    for path in TRACES:
        raw = json.loads(path.read_bytes())
        (traj,) = read_path(path)
        assert detect(path, path.read_bytes()[:65536]).name == "agentlens-bench"
        states = raw["states"]
        assert len(traj.tool_steps) == len(states) - 1
        expected_in = sum(
            (s.get("metadata") or {}).get("input_tokens") or 0 for s in states.values()
        )
        assert traj.usage_total().prompt_tokens == expected_in
        expected_status = "passed" if "-pass-" in path.name else "failed"
        assert traj.outcome.status == expected_status
        labels += sum(1 for s in traj.steps if s.stored_stage)
    assert labels == 10442


def test_merged_pta_is_not_a_trajectory(tmp_path: Path) -> None:
    import pytest

    from agentlens.errors import UnknownFormatError

    merged = next((BENCH / "ground_truth").glob("*.json"))
    with pytest.raises(UnknownFormatError, match="merged PTA"):
        read_path(merged)
