"""`agentlens --help` and each group's `--help` say in one whole sentence what every command is
for: a first sentence cut off at "..." told a new user nothing (`compare  Mann–Whitney / Fisher
tests and ratio thresholds (spec...`)."""

from __future__ import annotations

from collections.abc import Callable

import click
import pytest

from agentlens.cli import cli
from tests.cli.conftest import Run

GROUPS = [(), ("store",), ("stepvalue",), ("reference",), ("cache",)]


def command_rows(help_text: str) -> list[str]:
    rows = help_text.split("\nCommands:\n", 1)[1].splitlines()
    return [row.strip() for row in rows if row.strip()]


@pytest.mark.parametrize("group", GROUPS, ids=lambda g: " ".join(("agentlens", *g)))
def test_every_command_is_listed_with_a_whole_sentence(
    group: tuple[str, ...], run_cli: Callable[..., Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")  # a common terminal; click lists at most 78 columns
    result = run_cli(*group, "--help")
    assert result.code == 0
    rows = command_rows(result.out)
    assert rows and all(row.endswith(".") and not row.endswith("...") for row in rows), rows


def options_without_help(command: click.Command, path: str) -> list[str]:
    if isinstance(command, click.Group):
        context = click.Context(command)
        return [
            name
            for sub in command.list_commands(context)
            for name in options_without_help(
                command.get_command(context, sub) or command, f"{path} {sub}"
            )
        ]
    return [
        f"{path} {param.opts[-1]}"
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden and not param.help
    ]


def test_every_option_says_what_it_does() -> None:
    """`sxs --help` listed `--json` and `--out` bare: a new user could not tell what --out
    writes, nor that `compare --sxs` reads it."""
    assert options_without_help(cli, "agentlens") == []
