"""A trace whose file name is not UTF-8 (bytes Python keeps as lone surrogates, which no UTF-8
writer takes): every command reads, writes and prints it, with those bytes shown as `\\xNN`."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from agentlens.formats import read_path
from agentlens.os_names import has_surrogates, printable
from tests.cli.conftest import Run
from tests.conftest import BENCH

REAL = sorted((BENCH / "trajectories" / "psf__requests-1724").glob("*.json"))[0]
RAW_NAME = b"run-\xff\xfe-" + os.fsencode(REAL.name)
SHOWN = "run-\\xff\\xfe-" + REAL.name


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    traces = tmp_path / "traces"
    traces.mkdir()
    shutil.copy(REAL, os.path.join(os.fsencode(traces), RAW_NAME))
    return traces


def test_printable_shows_the_bytes_and_leaves_other_text_alone() -> None:
    assert printable(os.fsdecode(b"a-\xff\xc3.json")) == "a-\\xff\\xc3.json"
    assert printable("naïve ✓.json") == "naïve ✓.json"
    assert printable("x\ud800y") == "x\ufffdy"  # not from a byte: replaced
    assert not has_surrogates("naïve") and has_surrogates(os.fsdecode(b"\xff"))


def test_the_trajectory_names_its_file_printably_and_keeps_its_content(folder: Path) -> None:
    (path,) = folder.iterdir()
    (traj,) = read_path(path)
    (same,) = read_path(REAL)
    assert traj.source.path == str(folder / SHOWN)
    assert traj.id == printable(os.fsdecode(RAW_NAME)).removesuffix(".json")
    assert traj.steps == same.steps and traj.outcome == same.outcome


@pytest.mark.parametrize("target", ["jsonl", "atif"])
def test_convert_writes_it(
    folder: Path, tmp_path: Path, run_cli: Callable[..., Run], target: str
) -> None:
    result = run_cli("convert", str(folder), "--to", target, "-o", str(tmp_path / "out"))
    assert result.code == 0, result.err
    (written,) = (tmp_path / "out").iterdir()
    assert read_path(written)[0].steps[0].text == read_path(REAL)[0].steps[0].text


def test_inspect_prints_it_as_text_and_json(folder: Path, run_cli: Callable[..., Run]) -> None:
    shown = run_cli("inspect", str(folder))
    assert shown.code == 0 and "run-\\xff\\xfe-" in shown.out, shown.err
    (row,) = [
        json.loads(line) for line in run_cli("inspect", str(folder), "--json").out.splitlines()
    ]
    assert row["path"] == str(folder / SHOWN)


def test_a_broken_file_so_named_is_one_line_naming_it(
    folder: Path, run_cli: Callable[..., Run]
) -> None:
    (path,) = folder.iterdir()
    path.write_bytes(REAL.read_bytes()[:300])
    result = run_cli("inspect", str(folder))
    assert result.code == 1
    assert f"failed: {folder / SHOWN} [agentlens-bench]: " in result.err
    assert "Traceback" not in result.err
