"""Trace text and file names are hostile: an escape sequence in a model name, a tool name or a
file name reaches the terminal as visible text (`\\x1b[2J`), never as a command to it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.conftest import Run
from tests.conftest import BENCH

TASK = BENCH / "trajectories" / "psf__requests-1724"
CLEAR = "\x1b[2J\x1b]0;PWNED\x07"  # clear the screen, set the window title


def _hostile_runs(folder: Path) -> Path:
    """Real passing runs with a clear-screen sequence in the model and tool names, half of them
    with it in the file name (so in the run id) too."""
    folder.mkdir()
    for n, trace in enumerate(sorted(TASK.glob("*-pass-*.json"))[:6]):
        doc = json.loads(trace.read_bytes())
        doc["metadata"]["model_name"] = f"gpt{CLEAR}"
        for state in doc["states"].values():
            if state.get("tool_used"):
                state["tool_used"] += CLEAR
        name = f"run{n}{CLEAR if n % 2 else ''}-pass-.json"
        (folder / name).write_text(json.dumps(doc))
    return folder


@pytest.mark.parametrize(
    "command",
    [["inspect"], ["label"], ["cohort", "--boot", "20"], ["score", "--reference", "REF"]],
    ids=lambda c: c[0],
)
def test_no_escape_sequence_from_a_trace_reaches_the_terminal(
    command: list[str], tmp_path: Path, run_cli: Callable[..., Run]
) -> None:
    runs = _hostile_runs(tmp_path / "runs")
    if "REF" in command:
        ref = tmp_path / "ref.json"
        assert run_cli("reference", "build", str(runs), "-o", str(ref)).code == 0
        command = [c.replace("REF", str(ref)) for c in command]
    result = run_cli(command[0], str(runs), *command[1:])
    assert result.code == 0, result.err
    for stream in (result.out, result.err):
        assert "\x1b" not in stream and "\x07" not in stream
    assert "\\x1b[2J" in result.out  # shown, so the odd name can still be found
