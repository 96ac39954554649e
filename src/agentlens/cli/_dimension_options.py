"""`--metric-set` and `--dimension`, shared by `review` and `sxs`: the metric set (spec §5.6)
names the dimensions judged, `--dimension` narrows it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from agentlens.reviews import ALL_DIMENSIONS, METRIC_SETS

F = TypeVar("F", bound=Callable[..., Any])


def dimension_options(command: F) -> F:
    command = click.option(
        "--dimension",
        "dimensions",
        multiple=True,
        type=click.Choice(ALL_DIMENSIONS),
        help="Only these dimensions of the metric set (repeatable).",
    )(command)
    return click.option(
        "--metric-set",
        type=click.Choice(tuple(METRIC_SETS)),
        default="workflows",
        show_default=True,
        help="workflows: the five dimensions of the QI; testing: those plus RelianceOnMocking, "
        "TestMaintainability, TestSemanticCoverage and TestUsefulness (AgentLens's own rubrics, "
        "reported beside the QI, never in it).",
    )(command)


def chosen_dimensions(metric_set: str, only: tuple[str, ...]) -> tuple[str, ...]:
    dims = METRIC_SETS[metric_set]
    outside = [d for d in only if d not in dims]
    if outside:
        raise click.BadParameter(
            f"{', '.join(outside)} is not in the {metric_set} metric set "
            "(add --metric-set testing)",
            param_hint="'--dimension'",
        )
    return only or dims
