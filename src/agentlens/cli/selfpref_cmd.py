"""`agentlens selfpref`: self-preference of two judges that cross-judged the same A/B pair (spec §9)."""

from __future__ import annotations

import click
import orjson
from rich.table import Table

from agentlens.cli._app import console, say
from agentlens.errors import ConfigError
from agentlens.jsonio import read_json
from agentlens.list_text import counted
from agentlens.reviews import NO_SCORED_ITEM
from agentlens.reviews.documents import SXS_KIND, check, same_run
from agentlens.reviews.reliability import self_preference_from_sxs


@click.command()
@click.argument("judge_1_sxs", type=click.Path(exists=True, dir_okay=False))
@click.argument("judge_2_sxs", type=click.Path(exists=True, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def selfpref(judge_1_sxs: str, judge_2_sxs: str, as_json: bool) -> int:
    """Measure how much two judges favour their own model family.

    Share of (task, dimension) cells where each judge favours its own family.

    JUDGE_1_SXS and JUDGE_2_SXS are `agentlens sxs --out` files of the same A/B runs, judged by a
    model of A's family and one of B's family. Exit 4 when no cell was scored by both."""
    docs = [_load(path) for path in (judge_1_sxs, judge_2_sxs)]
    _check_pair(judge_2_sxs, docs[0], docs[1])
    result = self_preference_from_sxs(docs[0], docs[1]).to_dict()
    code = 0 if result["cells"] else NO_SCORED_ITEM
    if as_json:
        console.print_json(orjson.dumps(result).decode())
        return code
    table = Table("dimension", "cells", "disagree", "self-favouring", "other-favouring")
    for dim, row in sorted(result["by_dimension"].items()):
        table.add_row(dim, *(str(row[k]) for k in ("cells", "disagree", "self", "other")))
    console.print(table)
    if code:
        console.print("0 cells: rates n/a (no task and dimension scored by both judges)")
        return code
    console.print(
        f"{counted(result['cells'], 'cell')}: disagree {result['disagree_rate']:.1%}, "
        f"self-favouring {result['self_favouring_rate']:.1%}, "
        f"other-favouring {result['other_favouring_rate']:.1%}",
        highlight=False,
    )
    return 0


def _check_pair(second: str, one: dict[str, object], two: dict[str, object]) -> None:
    """Both files must judge the same runs in the same order: swapped, every sign flips and each
    judge's lean to its own family counts as the other's."""
    runs = [(doc.get("run_a"), doc.get("run_b")) for doc in (one, two)]
    (a, b), (a2, b2) = runs
    if None not in (a, b, a2, b2) and not (same_run(a2, a) and same_run(b2, b)):
        if same_run(a2, b) and same_run(b2, a) and not same_run(a, b):
            raise ConfigError(
                f"{second} judged {runs[1][0]} as run A and {runs[1][1]} as run B, the other "
                "way round: run its sxs again with the runs in the first file's order"
            )
        _warn(f"the two files judged different runs ({runs[0]} and {runs[1]})")
    if one.get("judge") is not None and one.get("judge") == two.get("judge"):
        _warn(f"both files were judged by {one['judge']}: self-preference needs two families")


def _warn(text: str) -> None:
    say("warning", text)


def _load(path: str) -> dict[str, object]:
    doc = read_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("dimensions"), dict):
        raise ConfigError(f"{path}: not an `agentlens sxs --out` document (no 'dimensions')")
    check(path, doc, SXS_KIND)
    return doc
