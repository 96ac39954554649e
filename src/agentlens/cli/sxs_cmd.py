"""`agentlens sxs RUN_A RUN_B`: side-by-side reviews of two runs on their common tasks. Repeats of a
task are paired by position (sorted by trajectory id) and keyed `task#i`; unpaired trajectories
are counted and listed in the JSON (`pairing`). With `--metric-set auto` (the default) the
testing set's dimensions are judged only on tasks tagged testing on both sides."""

from __future__ import annotations

from typing import Any

import click
from rich.table import Table
from rich.text import Text

from agentlens.cli._app import console, err_console
from agentlens.cli._dimension_options import (
    check_auto_request,
    chosen_dimensions,
    dimension_options,
)
from agentlens.cli._inputs import load_inputs, report_failures
from agentlens.cli.review_cmd import samples_option
from agentlens.jsonio import dump
from agentlens.list_text import counted
from agentlens.providers import get_provider
from agentlens.reviews import NO_SCORED_ITEM
from agentlens.reviews.auto_metric_set import AUTO
from agentlens.reviews.documents import load_reviews
from agentlens.reviews.judge.ask import configured_temperature
from agentlens.reviews.sxs.pairing import PAIRINGS
from agentlens.reviews.sxs.runs import SideBySide, SxsSettings, side_by_side


@click.command()
@click.argument("run_a")
@click.argument("run_b")
@click.option(
    "--reviews-a",
    type=click.Path(exists=True, dir_okay=False),
    required=True,
    help="`agentlens review --out` of run A.",
)
@click.option(
    "--reviews-b",
    type=click.Path(exists=True, dir_okay=False),
    required=True,
    help="`agentlens review --out` of run B.",
)
@click.option("--judge", "judge_model", default="judge", show_default=True,
              help="Model string or role name.")  # fmt: skip
@dimension_options
@click.option("--no-swap", is_flag=True, help="Skip the order-swapped replay.")
@click.option(
    "--pairing",
    type=click.Choice(PAIRINGS),
    default="repeat",
    show_default=True,
    help="Permutation-test unit: each repeat pair, or each task's mean over its pairs.",
)
@click.option(
    "--budget-tokens",
    default=4000,
    show_default=True,
    type=click.IntRange(min=200),
    help="Token budget for both transcripts.",
)
@click.option(
    "--max-tokens",
    default=500,
    show_default=True,
    type=click.IntRange(min=1),
    help="Judge answer limit.",
)
@click.option(
    "--profile",
    type=click.Choice(["default", "released"]),
    default="default",
    show_default=True,
    help="`released`: the released evaluator's permutation p bit for bit (float ties with the "
    "observed mean are dropped, so p comes out smaller), its LLM-summarised judge alert, "
    "its review presence (any review text, scored or not) and its trinomial test (float ties, "
    "p = -1 above 500 pairs); default counts every tie, applies the alert rule to the comparison "
    "lines and gives no trinomial p above 500 pairs (spec §8.4).",
)
@samples_option("Judge each order N times: the mean score gets a 95% CI from their variance.")
@click.option(
    "--free-text",
    is_flag=True,
    help="Ask for the tagged answer (<Comparison>, <PairwiseScore>) even where the backend can "
    "constrain answers to a JSON schema (the default there; `--profile released` always asks "
    "for the tagged answer, as the released evaluator does).",
)
@click.option("--no-cache", is_flag=True, help="Do not reuse cached judge answers.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="Write the comparison JSON here (input of `compare --sxs`).")  # fmt: skip
def sxs(
    run_a: str,
    run_b: str,
    reviews_a: str,
    reviews_b: str,
    judge_model: str,
    metric_set: str,
    dimensions: tuple[str, ...],
    no_swap: bool,
    no_cache: bool,
    as_json: bool,
    out: str | None,
    **settings: Any,
) -> int:
    """Judge two runs side by side, task by task, with an LLM.

    Per dimension: mean score in [−1, 1] (negative = A better), permutation p, position
    consistency. Exit 0 ok; 1 an input or judge call failed; 4 a dimension has no scored
    comparison (its mean is n/a); 2 usage error."""
    explicit = None if metric_set == AUTO else chosen_dimensions(metric_set, dimensions)
    loaded = load_inputs([run_a]), load_inputs([run_b])
    trajs_a, trajs_b = loaded[0].trajectories, loaded[1].trajectories
    if explicit is None:
        check_auto_request(dimensions, [*trajs_a, *trajs_b])
    reviews = load_reviews(reviews_a), load_reviews(reviews_b)
    client = get_provider(judge_model, role="judge", cache=not no_cache)
    settings["temperature"] = configured_temperature(judge_model)
    with console.status("side-by-side judging", spinner="dots"):
        compared = side_by_side(
            client, (run_a, run_b), (trajs_a, trajs_b), reviews, metric_set=metric_set,
            dimensions=explicit, only=dimensions, settings=SxsSettings(swap=not no_swap, **settings),
        )  # fmt: skip
    if compared.absent_testing:
        err_console.print(
            f"metric set auto: {', '.join(compared.absent_testing)} not judged: no selected task "
            "has all its trajectories tagged testing on both sides",
            highlight=False,
        )
    doc = compared.to_dict()
    if out:
        dump(doc, out)
    if as_json:
        console.print_json(dump(doc))
    else:
        _print_tables(compared, doc)
    failed = max(*map(report_failures, loaded), _report_call_failures(compared))
    return max(failed, _report_unscored(compared))


def _report_call_failures(compared: SideBySide) -> int:
    """One line when judge calls failed outright (after retries); exit 1, as in `review`."""
    answers = [p for r in compared.results.values() for c in r.cells for p in c.comparisons]
    failed = [p for p in answers if (p.unscored_reason or "").startswith("provider error")]
    if not failed:
        return 0
    err_console.print(
        Text.assemble(
            ("failed:", "red"),
            f" {len(failed)} of {len(answers)} judge calls; first: {failed[0].unscored_reason}",
        ),
    )
    return 1


def _report_unscored(compared: SideBySide) -> int:
    """Exit `NO_SCORED_ITEM` when a dimension has no scored comparison: its mean is n/a."""
    empty = [d for d, r in compared.results.items() if all(c.score is None for c in r.cells)]
    for dim in empty:
        err_console.print(
            Text.assemble(
                ("unscored:", "red"),
                f" no scored comparison for {dim}: its mean is n/a (exit {NO_SCORED_ITEM})",
            ),
        )
    return NO_SCORED_ITEM if empty else 0


def _print_tables(compared: SideBySide, doc: dict[str, Any]) -> None:
    # A and B, as the legend and the flags say: the judge's A1 / A2 swap with the order
    table = Table(title=f"SxS {compared.run_a} (A) vs {compared.run_b} (B)")
    for name in ("dimension", "mean", "p", "unscored", "consistency", "flag"):
        table.add_column(name)
    # the trinomial test in a table of its own: with it, one table no longer fits 80 columns
    wins = Table(title="win / tie / loss (conservative trinomial test, reported only)")
    for name in ("dimension", "W/T/L", "trin. p"):
        wins.add_column(name)
    for dim, r in compared.results.items():
        d = doc["dimensions"][dim]
        flag = "ALERT" if r.alert else "warning" if r.warning else "ok"
        rate = "–" if r.consistency_rate is None else f"{r.consistency_rate:.0%}"
        mean = "n/a" if d["mean_score"] is None else f"{d['mean_score']:+.3f}"
        p = "n/a" if d["p_value"] is None else f"{d['p_value']:.3f}"
        table.add_row(
            dim, mean, p,
            f"{d['unscored_rate']:.0%}", rate, flag,
        )  # fmt: skip
        wins.add_row(dim, *_trinomial_cells(d["trinomial"]))
        if r.samples:
            err_console.print(f"{dim}: {r.samples.reason}", highlight=False)
    console.print(table)
    console.print(wins)
    info = doc["pairing"]
    err_console.print(
        f"{counted(info['pairs'], 'pair')} over {counted(info['tasks'], 'task')} "
        f"({info['tasks_with_repeats']} with "
        f"repeats, keyed task#i); unpaired: {info['unpaired_a']} in A, {info['unpaired_b']} in B",
        highlight=False,
    )
    err_console.print(
        "negative mean = run A better; consistency = share of cells whose two orders agree in sign"
    )
    err_console.print(
        "W/T/L = scores > 0 (B better) / = 0 / < 0; trin. p = the conservative trinomial "
        "test, one-sided (B better), reported only: the flags use the permutation p"
    )


def _trinomial_cells(trinomial: dict[str, Any]) -> tuple[str, str]:
    counts = f"{trinomial['wins']}/{trinomial['ties']}/{trinomial['losses']}"
    p = trinomial["p_value"]
    return counts, "–" if p is None else f"{p:.3f}"
