"""Options shared by the process-scoring commands (`label`, `reference`, `score`, `cohort`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

profile_option = click.option(
    "--profile",
    type=click.Choice(["paper", "sdk-compat"]),
    default="paper",
    show_default=True,
    help="paper: the paper's definitions and the careful-human labeler; "
    "sdk-compat: the released SDK, quirks included.",
)


def input_options(command: F) -> F:
    """`--labels` (outcome sidecars) and `--lenient`, as `agentlens inspect` takes them."""
    command = click.option(
        "--labels", multiple=True, help="Outcome sidecar: results.json, report, CSV, logs dir."
    )(command)
    return click.option("--lenient", is_flag=True, help="Accept non-conformant files.")(command)
