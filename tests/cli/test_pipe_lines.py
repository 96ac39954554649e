"""In a pipe rich wraps at 80 columns: a result line written as text must stay one line (a log or
a grep sees it whole), while tables still fit the width."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.cli.conftest import Run
from tests.conftest import BENCH


def test_a_long_result_line_is_one_line_in_a_pipe(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    out = tmp_path / ("a-folder-with-a-long-name-" * 3) / "psf__requests-1724.ref.json"
    task = BENCH / "trajectories" / "psf__requests-1724"
    done = run_cli("reference", "build", str(task), "-o", str(out))
    assert done.code == 0, done.err
    (line,) = [x for x in done.out.splitlines() if x.strip()]
    assert line.startswith("reference for psf__requests-1724: ") and line.endswith(f"→ {out}")
    assert len(line) > 80


def test_a_table_still_fits_the_width_in_a_pipe(run_cli: Callable[..., Run]) -> None:
    done = run_cli("inspect", str(BENCH / "trajectories" / "psf__requests-1724"))
    assert done.code == 0, done.err
    assert max(len(x) for x in done.out.splitlines()) <= 80
