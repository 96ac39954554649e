"""`agentlens qi`: the Quality Index from a reviews file and verify results (or given components)."""

from __future__ import annotations

import click

from agentlens.cli._app import console, err_console


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
    help="DIMENSION=MEAN, e.g. EndResult=0.75 (instead of --reviews).",
)
@click.option(
    "--variance",
    "variance_paths",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="`agentlens qi --json` outputs of N repeated runs: print each component's share of Var(QI).",
)
@click.option("--json", "as_json", is_flag=True)
def qi(
    reviews_path: str | None,
    verify_paths: tuple[str, ...],
    formal: float | None,
    components: tuple[str, ...],
    variance_paths: tuple[str, ...],
    as_json: bool,
) -> int:
    """QI = 100 × (formal pass rate + five judge means) / 6; missing components warn and count 0.
    Other reviewed dimensions (the testing set's) are listed beside the QI, never in it."""
    from agentlens.errors import ConfigError
    from agentlens.reviews.judge.judge import aggregate
    from agentlens.reviews.qi import quality_index
    from agentlens.reviews.report import (
        dump,
        formal_results,
        load_reviews,
        reviewed_dimensions,
        verifier_counts,
    )

    if variance_paths:
        return _variance(variance_paths, as_json)
    means: dict[str, float | None] = {}
    unscored: dict[str, float] = {}
    if reviews_path:
        reviews = load_reviews(reviews_path)
        for dim, summary in aggregate(reviews, reviewed_dimensions(reviews)).items():
            means[dim] = summary.mean
            if summary.scored + summary.unscored:
                unscored[dim] = summary.unscored_rate
    for item in components:
        dim, sep, text = item.partition("=")
        if not sep:
            raise ConfigError(f"--component {item!r}: expected DIMENSION=MEAN")
        means[dim] = float(text)
    side: dict[str, float | int] = {}
    if verify_paths:
        results = formal_results(verify_paths)
        formal = sum(results) / len(results) if results else None
        passed, total = verifier_counts(verify_paths)
        side = {
            "passed": passed,
            "total": total,
            "fraction": round(passed / total, 4) if total else 0.0,
        }
    result = quality_index(formal, means)
    beside = {d: mean for d, mean in means.items() if d not in result.components}
    doc = {**result.to_dict(), "unscored_rate": unscored}
    if beside:
        doc["beside_qi"] = beside
    if side:
        doc["verifiers_passed"] = side
    if as_json:
        console.print_json(dump(doc))
    else:
        console.print(f"Quality Index {result.shown}   {result.reason}", highlight=False)
        _print_means(result.components, unscored)
        if beside:
            console.print("  beside the QI (not in it):", highlight=False)
            _print_means(beside, unscored)
        if side:
            console.print(
                f"  side metric (not in QI): {side['passed']}/{side['total']} individual "
                f"verifiers passed = {side['fraction']:.3f}",
                highlight=False,
            )
    for warning in result.warnings:
        err_console.print(f"[yellow]warning:[/yellow] {warning}")
    return 0


def _print_means(means: dict[str, float | None], unscored: dict[str, float]) -> None:
    for name, value in means.items():
        rate = f"   unscored {unscored[name]:.0%}" if name in unscored else ""
        console.print(
            f"  {name:22} {'missing' if value is None else f'{value:.3f}'}{rate}", highlight=False
        )


def _variance(paths: tuple[str, ...], as_json: bool) -> int:
    from agentlens.errors import ConfigError
    from agentlens.reviews.documents import check, read_json
    from agentlens.reviews.reliability import variance_shares
    from agentlens.reviews.report import dump

    if len(paths) < 2:
        raise ConfigError("--variance needs the `qi --json` files of at least 2 runs")
    runs = []
    for path in paths:
        doc = read_json(path)
        check(path, doc, "qi")
        runs.append({k: v or 0.0 for k, v in doc["components"].items()})
    result = variance_shares(runs).to_dict()
    if as_json:
        console.print_json(dump(result))
    else:
        console.print(
            f"QI over {result['runs']} runs: {result['qi_mean']} ± {result['qi_sd']} (sd)"
        )
        for name, share in result["variance_share"].items():
            console.print(f"  {name:22} {share:7.1%} of Var(QI)", highlight=False)
    return 0
