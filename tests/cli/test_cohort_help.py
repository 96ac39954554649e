"""`agentlens cohort --help` and `score --help` state the calibrated tiers' meaning and
thresholds, and `cohort --help` does not load scipy (issue 25 item 2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from agentlens.process.profiles import CALIBRATED

SRC = Path(__file__).resolve().parents[2] / "src"
PROBE = """
import sys
from agentlens.cli import main
code = main(["{command}", "--help"])
print("SCIPY" if "scipy" in sys.modules else "NO-SCIPY")
"""


def helped(command: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(command=command)],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    return " ".join(done.stdout.split())


def test_cohort_help_states_the_tiers_and_loads_no_scipy() -> None:
    text = helped("cohort")
    assert text.endswith("NO-SCIPY")
    assert f"boundary {CALIBRATED.lucky_below:g}" in text
    assert f"Ideal = a pass scoring ≥ {CALIBRATED.ideal_min:g}" in text
    assert "Lucky = a pass below it (its process looks like a failure)" in text


def test_score_help_states_the_tiers() -> None:
    text = helped("score")
    assert "Partial-fail = a failure at or above it" in text and "at most 5 %" in text
