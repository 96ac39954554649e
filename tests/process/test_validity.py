"""The validity figures `cohort` prints beside the paper's."""

from __future__ import annotations

import math

from rich.console import Console

from agentlens.cli._cohort_tables import validity_table
from agentlens.process.validity import task_bootstrap, validity


def test_one_task_gives_no_task_bootstrap_ci() -> None:
    """`cohort` on one task's 37 runs printed "0.538 [0.538, 0.538]": every resample of one
    task is that task, so the CI had zero width, a certainty one task cannot give."""
    scores, passed = [70.0, 60.0, 20.0, 80.0], [True, False, False, True]
    low, high = task_bootstrap(scores, passed, ["t"] * 4, n_boot=50)
    assert math.isnan(low) and math.isnan(high)
    two = task_bootstrap(scores, passed, ["t", "t", "u", "u"], n_boot=50)
    assert not math.isnan(two[0])
    figures = validity("default", scores, passed, ["t"] * 4, [None] * 4, 50.0, n_boot=50)
    console = Console(width=200, record=True)
    console.print(validity_table(figures))
    shown = console.export_text()
    assert "1.000 [n/a: 1 task]" in shown and "nan" not in shown
