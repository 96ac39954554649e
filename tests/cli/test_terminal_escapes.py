"""A real trace with terminal escape sequences, C1 controls and bidi overrides planted in its id,
model, agent, tool name and command: what the CLI prints shows them as visible characters, and
a colour terminal still gets the CLI's own styles."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

import agentlens
from agentlens.formats.jsonl import dump_jsonl
from tests.conftest import BENCH

SRC = str(Path(__file__).resolve().parents[2] / "src")
REAL = sorted((BENCH / "trajectories" / "psf__requests-1724").glob("*.json"))[0]
ESC = "\x1b"
PLANTED = (
    f"{ESC}]52;c;cHduZWQ=\a"  # write the clipboard
    f"{ESC}]0;PWNED\a"  # the window title
    f"{ESC}[2J{ESC}[H"  # clear the screen
    f"{ESC}]8;;https://evil.example/{ESC}\\link{ESC}]8;;{ESC}\\"  # a hidden hyperlink
    "\x9b31m"  # CSI as one C1 character
    "\u202eevil\u2066"  # right-to-left override, isolate
)
RAW = [f"{ESC}]", f"{ESC}[2J", "\x9b", "\u202e", "\u2066"]


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    (real,) = agentlens.read_path(REAL)
    steps = list(real.steps)
    tool = next(i for i, s in enumerate(steps) if s.kind == "tool")
    steps[tool] = msgspec.structs.replace(
        steps[tool], tool_name=f"bash{PLANTED}", command=f"echo {PLANTED}"
    )
    agent = msgspec.structs.replace(real.agent, name=f"agent{PLANTED}")
    trajectory = msgspec.structs.replace(
        real, id=f"run{PLANTED}", model=f"gpt{PLANTED}", agent=agent, steps=steps
    )
    path = tmp_path / f"hostile{ESC}]0;NAME.jsonl"  # the file name too
    dump_jsonl([trajectory], path)
    return path


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC, "FORCE_COLOR": "1", "COLUMNS": "200"}
    argv = [sys.executable, "-m", "agentlens", *args]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize("command", ["inspect", "label", "telemetry"])
def test_planted_escapes_print_as_visible_characters(hostile: Path, command: str) -> None:
    done = cli(command, str(hostile))
    assert done.returncode == 0, done.stderr
    assert [raw for raw in RAW if raw in done.stdout + done.stderr] == []
    assert "␛]52;c;cHduZWQ=" in done.stdout and "�evil�" in done.stdout
    assert f"{ESC}[" in done.stdout  # the CLI's own styles still reach a colour terminal


def test_a_failure_line_shows_a_planted_file_name_visibly(tmp_path: Path) -> None:
    bad = tmp_path / f"bad{ESC}]0;TITLE{ESC}[2J.jsonl"
    bad.write_text("not a trace")
    done = cli("inspect", str(bad))
    assert done.returncode == 1
    assert [raw for raw in RAW if raw in done.stderr] == []
    assert "bad␛]0;TITLE␛[2J.jsonl" in done.stderr
