"""Side files a user names beside the traces (`score --reference`, `stepvalue adapt-open-qa`'s
task list, `cohort --rows`, JSON and YAML configs) are read by `bounded_read.read_named`: only a
regular file. A FIFO named as one was opened and waited on for ever; `/dev/zero` was read until
memory ran out (not run here: it takes the machine's memory in seconds)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentlens.bounded_read import read_named
from tests.whole_process import agentlens

CLAUDE = "formats/claude-code/marot-spotter/short.jsonl"


@pytest.mark.parametrize(
    "command",
    [
        ("score", "--reference", "{fifo}", "{trace}"),
        ("stepvalue", "adapt-open-qa", "{fifo}", "{trace}", "-o", "{out}"),
        ("cohort", "--rows", "{fifo}"),
    ],
    ids=["score-reference", "adapt-open-qa-tasks", "cohort-rows"],
)
def test_a_fifo_named_as_a_side_file_is_one_line(
    data_dir: Path, tmp_path: Path, command: tuple[str, ...]
) -> None:
    fifo = tmp_path / "side.jsonl"
    os.mkfifo(fifo)
    names = {"fifo": str(fifo), "trace": str(data_dir / CLAUDE), "out": str(tmp_path / "o.jsonl")}
    shown = agentlens(*(part.format(**names) for part in command))
    assert shown.returncode == 2, shown.stderr
    assert shown.stderr.startswith("error: ") and len(shown.stderr.splitlines()) == 1
    assert "not a regular file" in shown.stderr


def test_read_named_reads_a_regular_file_whole(data_dir: Path) -> None:
    path = data_dir / CLAUDE
    assert read_named(path) == path.read_bytes()
    with pytest.raises(OSError, match="not a regular file"):
        read_named("/dev/zero")
