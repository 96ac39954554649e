"""Inputs that used to stop a batch or hang it are one file's one-line error now: a number no
64-bit column holds (a token count of 2**70) and a FIFO named on the command line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agentlens.errors import TraceError
from agentlens.formats.load import COPIED_FIELDS, _check_numbers, read_path
from agentlens.trajectory import Trajectory

SRC = str(Path(__file__).resolve().parents[2] / "src")
CLAUDE = "formats/claude-code/marot-spotter"
MINI = "formats/mini-swe-agent-fixtures/local.traj.json"


def agentlens(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC, "AGENTLENS_STORE": str(tmp_path / "store.db")}
    return subprocess.run([sys.executable, "-m", "agentlens", *args], capture_output=True,
                          text=True, env=env, timeout=60)  # fmt: skip


def inputs(data_dir: Path, tmp_path: Path) -> list[str]:
    """Two good real traces and a copy of one whose token counts are 2**70."""
    real = sorted((data_dir / CLAUDE).glob("*.jsonl"))[0]
    huge = tmp_path / "huge.jsonl"
    huge.write_text(re.sub(r'"input_tokens": ?\d+', f'"input_tokens": {2**70}', real.read_text()))
    return [str(data_dir / MINI), str(huge), str(real)]


def test_a_token_count_of_2_to_the_70_is_that_files_error(data_dir: Path, tmp_path: Path) -> None:
    files = inputs(data_dir, tmp_path)
    shown = agentlens(tmp_path, "inspect", *files, "--json")
    assert shown.returncode == 1 and len(shown.stdout.splitlines()) == 2  # the two good ones
    assert "huge.jsonl" in shown.stderr and "number out of range at steps[" in shown.stderr
    assert "Traceback" not in shown.stderr and "internal error" not in shown.stderr
    stored = agentlens(tmp_path, "store", "import", *files)
    assert stored.returncode == 1, stored.stderr
    listed = agentlens(tmp_path, "store", "runs", "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout)  # the good ones were kept


def test_a_fifo_named_on_the_command_line_is_refused_at_once(
    data_dir: Path, tmp_path: Path
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    shown = agentlens(tmp_path, "inspect", str(fifo), str(data_dir / MINI), "--json")
    assert time.monotonic() - started < 30  # it used to wait forever for a writer
    assert shown.returncode == 1 and len(shown.stdout.splitlines()) == 1
    assert "cannot read a FIFO: only regular files are traces" in shown.stderr


def test_the_walk_spells_the_path_and_skips_only_what_it_is_told(data_dir: Path) -> None:
    """`raw`/`arguments` are skipped only for a file with no run of 19 digits (`read_path`)."""
    (traj,) = read_path(data_dir / MINI)
    traj.steps[1].arguments["limit"] = 2**70
    with pytest.raises(TraceError, match=r"out of range at steps\[1\]\.arguments\.limit: 1180"):
        _check_numbers(data_dir / MINI, traj)
    _check_numbers(data_dir / MINI, traj, COPIED_FIELDS)  # passed over, as asked
    traj.steps[1].usage = None
    traj.metadata["n"] = [0, -(2**64)]
    with pytest.raises(TraceError, match=r"out of range at metadata\.n\[1\]"):
        _check_numbers(data_dir / MINI, traj, COPIED_FIELDS)


def test_the_digit_run_scan_answers_as_the_regex_across_chunks(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`has_long_digits` (translate + substring search, by chunks) answers as `\\d{19}` does, a
    run cut by a chunk's end included, on bytes and on a file read by parts (`LargeFile`)."""
    import random

    from agentlens.formats import load
    from agentlens.formats._json import LargeFile

    monkeypatch.setattr(load, "_CHUNK", 32)
    rng, regex, answers = random.Random(7), re.compile(rb"\d{19}"), []
    for _ in range(5000):
        data = bytes(rng.choice(b"0123456789x \xd9\xb0") for _ in range(rng.randrange(120)))
        answers.append(load.has_long_digits(data))
        assert answers[-1] == bool(regex.search(data)), data
    assert 100 < sum(answers) < 4900
    mapped = tmp_path / "mapped"
    mapped.write_bytes(b"x" * 20 + b"9" * 19 + b"x" * 40)  # the run spans the first chunk's end
    with mapped.open("rb") as handle:
        assert load.has_long_digits(LargeFile(handle, 79))  # type: ignore[arg-type]


@pytest.mark.parametrize("redact", [True, False])
def test_a_number_the_reader_made_is_checked_with_or_without_redaction(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, redact: bool
) -> None:
    """A value out of range that is not in the file (a reader's sum) is found whether the check
    reads redaction's JSON of the trajectory or walks it; the file alone has no long number."""
    from agentlens import redaction
    from agentlens.formats.agentlens_bench import AgentLensBenchReader

    path = next((data_dir / "agentlens-bench-dev" / "trajectories").rglob("*_pta.json"))
    made = AgentLensBenchReader._trajectory

    def summing(self: AgentLensBenchReader, *args: Any) -> Trajectory:
        traj = made(self, *args)
        traj.metadata["total_tokens"] = 2**70
        return traj

    monkeypatch.setattr(AgentLensBenchReader, "_trajectory", summing)
    monkeypatch.setattr(redaction, "_enabled", redact)
    with pytest.raises(TraceError, match=r"out of range at metadata\.total_tokens"):
        read_path(path)


def test_a_deeply_nested_value_holding_a_secret_is_that_files_error(
    data_dir: Path, tmp_path: Path
) -> None:
    """A key nested 900 lists deep in a message (within the JSON decoder's depth limit) used to
    overflow the redaction walk: `internal error`, exit 3, and the batch's other files unread."""
    doc = json.loads((data_dir / MINI).read_text())
    doc[3]["extra"] = "DEEP"
    deep = tmp_path / "deep.traj.json"
    nested = "[" * 900 + '"sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd"' + "]" * 900
    deep.write_text(json.dumps(doc).replace('"DEEP"', nested))
    shown = agentlens(tmp_path, "inspect", str(deep), str(data_dir / MINI), "--json")
    assert shown.returncode == 1 and len(shown.stdout.splitlines()) == 1, shown.stderr
    assert "deep.traj.json" in shown.stderr and "nested too deeply" in shown.stderr
    assert "Traceback" not in shown.stderr and "internal error" not in shown.stderr
    assert "AbCdEfGhIjKlMnOp" not in shown.stdout + shown.stderr
