from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from agentlens.cli import main


@dataclass
class Run:
    code: int
    out: str
    err: str


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Run]:
    """Run the real `agentlens` entry point in-process and capture what it prints."""

    def run(*args: str) -> Run:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run
