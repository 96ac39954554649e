"""Start-up cost: `agentlens --help` lists the commands from their sources, importing none of
them, and `cohort --help` / `score --help` load no numeric stack (issue 25)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click

from agentlens.cli import COMMANDS, cli

SRC = Path(__file__).resolve().parents[2] / "src"
PROBE = """
import sys
from agentlens.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
heavy = ("numpy", "scipy", "pyarrow", "pydantic", "httpx", "agentlens.providers")
print("LOADED", *sorted(m for m in heavy if m in sys.modules))
"""


def loaded(*argv: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=list(argv))],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    last = done.stdout.strip().splitlines()[-1].split()
    assert last[0] == "LOADED"
    return last[1:]


def test_the_command_list_is_the_one_the_commands_give() -> None:
    ctx = click.Context(cli, terminal_width=120)
    fast = click.HelpFormatter(width=120)
    cli.format_commands(ctx, fast)
    slow = click.HelpFormatter(width=120)
    click.Group.format_commands(cli, ctx, slow)
    assert fast.getvalue() == slow.getvalue()
    assert all(name in fast.getvalue() for name in COMMANDS)


def test_help_imports_no_command() -> None:
    assert loaded("--help") == []


def test_cohort_and_score_help_load_no_numeric_stack() -> None:
    assert loaded("cohort", "--help") == []
    assert loaded("score", "--help") == []
