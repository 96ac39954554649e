"""`agentlens qi`: the Quality Index from a reviews file and verify results (or given components)."""

from __future__ import annotations

import math

import click

from agentlens.cli._app import console, say
from agentlens.jsonio import dump
from agentlens.list_text import counted
from agentlens.reviews import ALL_DIMENSIONS, NO_SCORED_ITEM
from agentlens.reviews.qi import QualityIndex, qi_report
from agentlens.reviews.reliability import variance_of_qi_files


@click.command()
@click.option(
    "--reviews",
    "reviews_path",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Output of `agentlens review --out`.",
)
@click.option(
    "--verify",
    "verify_paths",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="Outputs of `agentlens verify --out` (repeatable).",
)
@click.option(
    "--formal",
    type=click.FloatRange(0, 1),
    default=None,
    help="Formal pass rate in [0, 1] (instead of --verify).",
)
@click.option(
    "--component",
    "components",
    multiple=True,
    callback=lambda _ctx, _param, value: tuple(map(_checked_component, value)),
    help="DIMENSION=MEAN, e.g. EndResult=0.75 (instead of --reviews).",
)
@click.option(
    "--variance",
    "variance_paths",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="`agentlens qi --json` outputs of N repeated runs: print each component's share of Var(QI).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the QI and its components as JSON.")
def qi(
    reviews_path: str | None,
    verify_paths: tuple[str, ...],
    formal: float | None,
    components: tuple[str, ...],
    variance_paths: tuple[str, ...],
    as_json: bool,
) -> int:
    """Quality Index of a run from its reviews and formal checks.

    QI = 100 × (formal pass rate + five judge means) / 6; a missing component makes it n/a,
    naming it (exit 4). Other reviewed dimensions (the testing set's) are listed beside the QI, never in it."""
    if variance_paths:
        return _variance(variance_paths, as_json)
    report = qi_report(reviews_path, verify_paths, formal, components)
    result, side = report.result, report.verifiers_passed
    if as_json:
        console.print_json(dump(report.to_dict()))
    else:
        console.print(f"Quality Index {_value_and_reason(result)}", highlight=False)
        _print_means(result.components, report.unscored)
        if report.beside:
            console.print("  beside the QI (not in it):", highlight=False)
            _print_means(report.beside, report.unscored)
        if side:
            fraction = "n/a" if side["fraction"] is None else f"{side['fraction']:.3f}"
            console.print(
                f"  side metric (not in QI): {side['passed']}/{side['total']} individual "
                f"verifiers passed = {fraction}",
                highlight=False,
            )
    for warning in result.warnings:
        say("warning", warning)
    if result.components.get("Formal") is None and formal is None and not verify_paths:
        say("hint", "the QI needs the formal pass rate: --formal RATE, or --verify FILE…")
    return NO_SCORED_ITEM if result.value is None else 0


def _value_and_reason(result: QualityIndex) -> str:
    """`57.00   100 × … = 57.00`; n/a once, as its reason starts `n/a: `."""
    return result.reason if result.value is None else f"{result.shown}   {result.reason}"


def _checked_component(item: str) -> str:
    """`DIMENSION=MEAN` with a known dimension and a mean in [0, 1], else a usage error."""
    dim, sep, text = item.partition("=")
    try:
        mean = float(text)
    except ValueError:
        mean = None
    if not sep or mean is None:
        raise click.BadParameter(f"{item!r}: not a number after '='; expected DIMENSION=MEAN")
    if dim not in ALL_DIMENSIONS:
        raise click.BadParameter(f"{item!r}: unknown dimension; one of {', '.join(ALL_DIMENSIONS)}")
    if not (math.isfinite(mean) and 0.0 <= mean <= 1.0):
        raise click.BadParameter(f"{item!r}: {mean} is not in [0, 1] (a mean, not a percent)")
    return item


def _print_means(means: dict[str, float | None], unscored: dict[str, float]) -> None:
    for name, value in means.items():
        rate = f"   unscored {unscored[name]:.0%}" if name in unscored else ""
        console.print(
            f"  {name:22} {'missing' if value is None else f'{value:.3f}'}{rate}", highlight=False
        )


def _variance(paths: tuple[str, ...], as_json: bool) -> int:
    result = variance_of_qi_files(paths).to_dict()
    if as_json:
        console.print_json(dump(result))
    else:
        mean = result["qi_mean"]
        shown = (
            "n/a (a component is missing)" if mean is None else f"{mean} ± {result['qi_sd']} (sd)"
        )
        console.print(f"QI over {counted(result['runs'], 'run')}: {shown}", highlight=False)
        for name, share in result["variance_share"].items():
            console.print(f"  {name:22} {share:7.1%} of Var(QI)", highlight=False)
    return NO_SCORED_ITEM if result["qi_mean"] is None else 0
