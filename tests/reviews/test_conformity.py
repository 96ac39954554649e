"""The setup check of `compare` (spec §11.2 "Setup"): runs covering different task points are
not comparable and alert. Real AgentLens-Bench runs; expected points come from the file names."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from agentlens.cli import main
from agentlens.reviews.conformity import setup_check
from tests.conftest import BENCH

TRAJ = BENCH / "trajectories"


def points(paths: list[Path]) -> Counter[str]:
    return Counter(p.parent.name for p in paths)  # the task folder of each trajectory file


def setup_row(capsys: pytest.CaptureFixture[str], a: str, b: str) -> tuple[int, dict]:
    capsys.readouterr()
    code = main(["compare", a, b, "--json"])
    doc = json.loads(capsys.readouterr().out)
    return code, next(c for c in doc["checks"] if c["name"] == "setup")


def test_same_task_points_pass(capsys: pytest.CaptureFixture[str]) -> None:
    a = sorted((TRAJ / "psf__requests-1724").glob("*gpt-4.1-*"))
    b = sorted((TRAJ / "psf__requests-1724").glob("*gpt-4o-*"))
    assert points(a) == points(b)  # 3 runs of the one task each
    _, row = setup_row(capsys, str(a[0].parent / "*gpt-4.1-*"), str(b[0].parent / "*gpt-4o-*"))
    assert (row["warning"], row["alert"], row["v1"], row["v2"]) == (False, False, len(a), len(b))


def test_different_task_points_alert(capsys: pytest.CaptureFixture[str]) -> None:
    a = sorted((TRAJ / "psf__requests-1724").glob("*gpt-4.1-*"))
    b = sorted((TRAJ / "pallets__flask-5014").glob("*gpt-4.1-*"))
    code, row = setup_row(capsys, str(a[0].parent / "*gpt-4.1-*"), str(b[0].parent / "*gpt-4.1-*"))
    assert code == 2 and row["alert"] and row["warning"]
    assert f"{len(a)} points only in run 1: psf__requests-1724×{len(a)}" in row["reason"]
    assert f"{len(b)} points only in run 2: pallets__flask-5014×{len(b)}" in row["reason"]


def test_judges_must_match() -> None:
    same = Counter({"t": 2})
    assert not setup_check(same, same, "openai:gpt-5.4", "openai:gpt-5.4").alert
    assert setup_check(same, same, "openai:gpt-5.4", "openai:gpt-4.1").alert
    assert setup_check(same, Counter({"t": 3})).alert  # one more repeat of the task
