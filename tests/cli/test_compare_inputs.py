"""`agentlens compare` is a CI gate: it must not pass on inputs it could not read."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from tests.conftest import BENCH, DATA

TASK = BENCH / "trajectories" / "psf__requests-1724"


def test_a_run_with_no_readable_trajectory_is_an_error(run_cli: Callable[..., object]) -> None:
    readme = DATA / "README.md"  # a real file, but not a trace
    result = run_cli("compare", str(TASK), str(readme))
    assert result.code == 2  # type: ignore[attr-defined]
    assert f"{readme}: no trajectories read" in result.err  # type: ignore[attr-defined]
    assert "Status: ok" not in result.out  # type: ignore[attr-defined]


def test_unreadable_files_are_listed_and_never_exit_0(
    run_cli: Callable[..., object], tmp_path: Path
) -> None:
    runs = sorted(TASK.glob("*.json"))
    for path in runs:
        shutil.copy(path, tmp_path / path.name)
    broken = tmp_path / runs[0].name
    broken.write_bytes(runs[0].read_bytes()[:100])  # truncated
    same = run_cli("compare", str(TASK), str(TASK))
    assert same.code == 0  # type: ignore[attr-defined]
    result = run_cli("compare", str(TASK), str(tmp_path))
    assert result.code >= 1  # type: ignore[attr-defined]
    assert f"failed: {broken}" in result.err  # type: ignore[attr-defined]
