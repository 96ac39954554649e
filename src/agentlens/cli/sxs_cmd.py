"""`agentlens sxs RUN_A RUN_B`: side-by-side reviews of two runs on their common tasks."""

from __future__ import annotations

import click
from rich.table import Table

from agentlens.cli._app import console, err_console
from agentlens.reviews import DIMENSIONS


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
@click.option("--judge", "judge_model", default="judge", show_default=True)
@click.option("--dimension", "dimensions", multiple=True, type=click.Choice(DIMENSIONS))
@click.option("--no-swap", is_flag=True, help="Skip the order-swapped replay.")
@click.option(
    "--budget-tokens", default=4000, show_default=True, help="Token budget for both transcripts."
)
@click.option("--no-cache", is_flag=True, help="Do not reuse cached judge answers.")
@click.option("--json", "as_json", is_flag=True)
@click.option("--out", type=click.Path(dir_okay=False), default=None)
def sxs(
    run_a: str,
    run_b: str,
    reviews_a: str,
    reviews_b: str,
    judge_model: str,
    dimensions: tuple[str, ...],
    no_swap: bool,
    budget_tokens: int,
    no_cache: bool,
    as_json: bool,
    out: str | None,
) -> int:
    """Per dimension: mean score in [−1, 1] (negative = A better), permutation p, position consistency."""
    from agentlens.cli._inputs import load_inputs
    from agentlens.providers import get_provider
    from agentlens.reviews.report import SXS_KIND, dump, load_reviews
    from agentlens.reviews.sxs.sxs import Side, run_sxs, task_key

    sides = []
    for path, reviews_path in ((run_a, reviews_a), (run_b, reviews_b)):
        trajs = {task_key(t): t for t in load_inputs([path]).trajectories}
        by_id = {t.id: key for key, t in trajs.items()}
        reviews = {
            by_id[r.trajectory_id]: r
            for r in load_reviews(reviews_path)
            if r.trajectory_id in by_id
        }
        sides.append(Side(trajs, reviews))
    client = get_provider(judge_model, role="judge", cache=not no_cache)
    with console.status("side-by-side judging", spinner="dots"):
        result = client.run(
            run_sxs(
                client,
                sides[0],
                sides[1],
                dimensions=dimensions or DIMENSIONS,
                swap=not no_swap,
                budget_tokens=budget_tokens,
            )
        )
    doc = {
        "kind": SXS_KIND,
        "run_a": run_a,
        "run_b": run_b,
        "judge": client.name,
        "dimensions": {d: r.to_dict() for d, r in result.items()},
    }
    if out:
        dump(doc, out)
    if as_json:
        console.print_json(dump(doc))
        return 0
    table = Table(title=f"SxS {run_a} (A1) vs {run_b} (A2)")
    for name in ("dimension", "mean", "p", "unscored", "consistency", "flag"):
        table.add_column(name)
    for dim, r in result.items():
        d = r.to_dict()
        flag = "ALERT" if r.alert else "warning" if r.warning else "ok"
        rate = "–" if r.consistency_rate is None else f"{r.consistency_rate:.0%}"
        table.add_row(
            dim,
            f"{d['mean_score']:+.3f}",
            f"{d['p_value']:.3f}",
            f"{d['unscored_rate']:.0%}",
            rate,
            flag,
        )
    console.print(table)
    err_console.print(
        "negative mean = run A better; consistency = share of cells whose two orders agree in sign"
    )
    return 0
