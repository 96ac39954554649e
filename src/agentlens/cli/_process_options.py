"""Options shared by the process-scoring commands (`label`, `reference`, `score`, `cohort`); their
input options are `_inputs.read_options`, as every command that reads traces takes them (`label`,
which shows no outcome, `_inputs.file_options`)."""

from __future__ import annotations

import click

from agentlens.process.profiles import DEFAULT_PROFILE, PROFILES

PROFILE_HELP = (
    "calibrated (default): the paper's labeler and signals, a logistic composite of ten "
    "process signals fitted leave-task-out on the dev data, printed with its weights in each "
    "reason (docs/validity.md); paper: Eq. 1 as published; "
    "sdk-compat: the released SDK, quirks included."
)
profile_option = click.option(
    "--profile",
    type=click.Choice(list(PROFILES)),
    default=DEFAULT_PROFILE,
    show_default=True,
    help=PROFILE_HELP,
)
label_profile_option = click.option(
    "--profile",
    type=click.Choice(list(PROFILES)),
    default=DEFAULT_PROFILE,
    show_default=True,
    help="Which labeler: paper (the paper's rules; calibrated labels as paper does) or "
    "sdk-compat (the released SDK's, quirks included).",
)

engine_option = click.option(
    "--engine",
    "engine_spec",
    envvar="AGENTLENS_ENGINE",
    default="serial",
    show_default=True,
    help="Where scoring runs: serial, processes[:N] (local pool), ray, ray:auto or ray:ADDRESS "
    "(env AGENTLENS_ENGINE).",
)
