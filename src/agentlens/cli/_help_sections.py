"""`--help` with a command's options under headings, for a command with too many for one list."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import click

TERM_WIDTH = 30
"""click's widest option column: a longer option name puts its help on the next line."""


class SectionedCommand(click.Command):
    """A command whose `--help` lists its options in `sections` (heading -> parameter names, in
    the order shown); any option no section names (`--help`) follows under "Other options"."""

    def __init__(self, *args: Any, sections: Mapping[str, Sequence[str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sections = sections

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        records = {
            param.name: record
            for param in self.get_params(ctx)
            if isinstance(param, click.Option) and (record := param.get_help_record(ctx))
        }
        # one column width for every section: each `write_dl` would size its own
        width = min(TERM_WIDTH, max(len(term) for term, _ in records.values()))
        records = {name: (term.ljust(width), text) for name, (term, text) in records.items()}
        for heading, names in self.sections.items():
            with formatter.section(heading):
                formatter.write_dl([records.pop(name) for name in names], col_max=TERM_WIDTH)
        if records:
            with formatter.section("Other options"):
                formatter.write_dl(list(records.values()), col_max=TERM_WIDTH)
