"""Options shared by the process-scoring commands (`label`, `reference`, `score`, `cohort`); their
input options are `_inputs.read_options`, as every command that reads traces takes them."""

from __future__ import annotations

import click

profile_option = click.option(
    "--profile",
    type=click.Choice(["paper", "sdk-compat"]),
    default="paper",
    show_default=True,
    help="paper: the paper's definitions and the careful-human labeler; "
    "sdk-compat: the released SDK, quirks included.",
)
