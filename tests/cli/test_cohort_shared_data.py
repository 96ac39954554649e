"""Issue 21: `agentlens cohort` over a folder of ../shared/data exits 0 with no failed run or
file, even where a file needs best-effort reading (the ATIF look-alike in formats/) or no task
has enough runs (mini-swe-agent-swebv, in test_guard_rails.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.conftest import DATA


@pytest.mark.parametrize("folder", ["formats", "swe-agent-java"])
def test_cohort_over_a_shared_folder_exits_0_with_nothing_failed(
    folder: str, run_cli: Callable[..., object]
) -> None:
    result = run_cli("cohort", "--boot", "20", "--json", str(DATA / folder))
    err = result.err  # type: ignore[attr-defined]
    assert result.code == 0, err  # type: ignore[attr-defined]
    assert "failed:" not in err and "file(s) failed" not in err
    if folder == "formats":
        assert "atif-like-openagents/trajectory.json: not conformant ATIF, read best-effort" in (
            " ".join(err.split())
        )
