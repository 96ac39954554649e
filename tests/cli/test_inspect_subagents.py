"""`inspect` says when a run handed work to sub-agents, whose steps its own count leaves out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agentlens.formats import read_path
from tests.conftest import FORMATS

CLAUDE = FORMATS / "claude-code" / "marot-spotter" / "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"


@pytest.mark.parametrize("width", [80, 220])  # lines for a narrow terminal, else the table
def test_inspect_counts_a_runs_sub_agents_and_their_steps(
    width: int, run_cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentlens.cli._app import console

    monkeypatch.setattr(console, "width", width)
    (run,) = read_path(CLAUDE)
    subs = run.subtrajectories
    assert len(subs) == 2 and not any(s.subtrajectories for s in subs)
    result = run_cli("inspect", str(CLAUDE))
    assert result.code == 0
    if width == 80:
        steps = sum(len(s.steps) for s in subs)
        assert f"  {len(run.steps)} steps + 2 sub-agents ({steps} steps) · tokens" in result.out
    else:
        assert f" {len(run.steps)} +2 sub " in result.out
