"""A real trace with terminal escape sequences, C1 controls and bidi overrides planted in its id,
model, agent, tool name and command: what the CLI prints shows them as visible characters, and
a colour terminal still gets the CLI's own styles."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

import agentlens
from agentlens.formats.jsonl import dump_jsonl
from tests.cli.conftest import Run
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
    assert "␛[2J" in result.out  # shown, so the odd name can still be found


@pytest.mark.parametrize("command", ["inspect", "label"])
def test_json_output_escapes_c1_controls_and_bidi_overrides(hostile: Path, command: str) -> None:
    """JSON escapes C0 controls but may hold C1 controls (U+009B is CSI to some terminals) and
    bidi overrides as they are: `inspect --json` and `label --json` printed them raw. Escaped
    (`\\u009b`), each line still decodes to the planted text."""
    done = cli(command, "--json", str(hostile))
    assert done.returncode == 0, done.stderr
    assert [raw for raw in RAW if raw in done.stdout + done.stderr] == []
    assert "\\u009b31m" in done.stdout and "\\u202eevil\\u2066" in done.stdout
    decoded = "".join(map(_strings, map(json.loads, done.stdout.splitlines())))
    assert f"run{PLANTED}" in decoded


def _strings(value: object) -> str:
    if isinstance(value, dict):
        return "".join(_strings(k) + _strings(v) for k, v in value.items())
    if isinstance(value, list):
        return "".join(map(_strings, value))
    return value if isinstance(value, str) else ""


def test_a_newline_in_folder_and_file_names_keeps_cohort_lines_whole(
    data_dir: Path, tmp_path: Path
) -> None:
    """`cohort` named copied files (`same content, ...`) and unscored tasks (`not scored:`, a task
    is its folder) with the newline of their names as it was: one warning printed as several
    lines, the later ones looking like lines of their own."""
    task = tmp_path / "ta\nsk"
    task.mkdir()
    session = (data_dir / "formats/claude-code/marot-spotter/short.jsonl").read_bytes()
    for run in ("r1\nx", "r2\nx"):
        (task / f"{run}.jsonl").write_bytes(session)
    shown = cli("cohort", str(tmp_path))
    lines = shown.stderr.splitlines()
    copies = [line for line in lines if "same content, scored as separate runs" in line]
    assert len(copies) == 1 and copies[0].endswith("r2\u240ax.jsonl"), shown.stderr
    assert "not scored: ta\u240ask: " in shown.stderr, shown.stderr
    assert not any(line.startswith(("sk", "x.json")) for line in lines), shown.stderr


def test_a_newline_in_a_file_name_keeps_the_demos_failed_line_whole(
    data_dir: Path, tmp_path: Path
) -> None:
    """The demo prints its read failures itself (`demo/reading.py`), and printed the newline of a
    broken file's name as it was: one `failed:` line became two."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "good.jsonl").write_bytes(
        (data_dir / "formats/claude-code/marot-spotter/short.jsonl").read_bytes()
    )
    (tmp_path / "data" / "broken\nx.json").write_text('{"messages": [')
    shown = cli("demo", "--data", str(tmp_path / "data"), "--section", "ingest",
                "--out", str(tmp_path / "out"))  # fmt: skip
    assert shown.returncode == 1, shown.stderr
    assert "broken\u240ax.json [openai-messages]: invalid JSON" in shown.stdout, shown.stdout
    assert not any(line.startswith("x.json") for line in shown.stdout.splitlines())
