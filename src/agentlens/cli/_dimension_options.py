"""`--metric-set` and `--dimension`, shared by `review` and `sxs`: the metric set (spec §5.6)
names the dimensions judged, `--dimension` narrows it. `auto`, the default, lets each
trajectory's scenario tags choose (`agentlens.reviews.auto_metric_set`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from agentlens.reviews import ALL_DIMENSIONS, METRIC_SETS, TESTING_DIMENSIONS
from agentlens.reviews.auto_metric_set import AUTO, tagged_testing

if TYPE_CHECKING:
    from agentlens.trajectory import Trajectory

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
        type=click.Choice((AUTO, *METRIC_SETS)),
        default=AUTO,
        show_default=True,
        help="auto: testing for trajectories whose scenario is tagged testing (`agentlens run` "
        "keeps the tags), workflows for the others; workflows: the five dimensions of the QI; "
        "testing: those plus RelianceOnMocking, TestMaintainability, TestSemanticCoverage and "
        "TestUsefulness (AgentLens's own rubrics, reported beside the QI, never in it).",
    )(command)


def chosen_dimensions(metric_set: str, only: tuple[str, ...]) -> tuple[str, ...]:
    """An explicit metric set's dimensions, narrowed by `--dimension`."""
    dims = METRIC_SETS[metric_set]
    outside = [d for d in only if d not in dims]
    if outside:
        raise click.BadParameter(
            f"{', '.join(outside)} is not in the {metric_set} metric set "
            "(add --metric-set testing)",
            param_hint="'--dimension'",
        )
    return only or dims


def check_auto_request(only: tuple[str, ...], trajs: Sequence[Trajectory]) -> None:
    """With auto, a testing dimension is judged only on trajectories tagged testing: asking for
    one when none is tagged would judge nothing."""
    asked = [d for d in only if d in TESTING_DIMENSIONS]
    if asked and not any(tagged_testing(t) for t in trajs):
        raise click.BadParameter(
            f"{', '.join(asked)}: with --metric-set auto a testing dimension is judged only on "
            "trajectories tagged testing, and none of the given ones is (no 'testing' in their "
            "scenario's tags[]); add --metric-set testing to judge them all on it",
            param_hint="'--dimension'",
        )
