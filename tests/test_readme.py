"""The README's Python SDK example runs as written, from the repository root."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _sdk_example() -> str:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Python SDK", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None, "the Python SDK section has no python block"
    return match[1]


def test_the_sdk_example_runs_on_the_shared_data() -> None:
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(_sdk_example(), "README.md", "exec"), {})  # our own README, not a trace
    finally:
        os.chdir(cwd)
    lines = out.getvalue().splitlines()
    java_runs = list((ROOT.parent / "shared/data/swe-agent-java").glob("*/trajs/*.traj"))
    assert len(lines) == len(java_runs) > 0
    assert all(line.startswith("swe-agent ") for line in lines)
    # SWE-agent keeps tokens only as file totals (`model_stats`): known, never printed as 0
    assert all("Usage(prompt_tokens=" in line for line in lines)
