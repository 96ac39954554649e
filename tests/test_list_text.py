"""One line for a list cut short: the ATIF, OTel, conformity, verifier and `mcp` messages all
show the first few names, then ` (+k more)`."""

from __future__ import annotations

import pytest

from agentlens.list_text import counted, first_few


@pytest.mark.parametrize(
    ("items", "shown"),
    [
        ([], ""),
        (["a"], "a"),
        (["a", "b", "c"], "a, b, c"),
        (["a", "b", "c", "d", "e"], "a, b, c (+2 more)"),
    ],
)
def test_the_first_few_then_how_many_more(items: list[str], shown: str) -> None:
    assert first_few(items, 3) == shown


def test_each_item_is_named_only_if_shown_and_joined_as_asked() -> None:
    named: list[int] = []

    def name(n: int) -> str:
        named.append(n)
        return f"#{n}"

    assert first_few(range(10), 2, name, sep="; ") == "#0; #1 (+8 more)"
    assert named == [0, 1]


@pytest.mark.parametrize(
    ("n", "noun", "shown"),
    [
        (1, "run", "1 run"),
        (0, "run", "0 runs"),
        (2, "trajectory", "2 trajectories"),
        (1, "trajectory", "1 trajectory"),
        (3, "pass", "3 passes"),
        (2, "day", "2 days"),
        (2, "step row", "2 step rows"),
        (2, "re-ask", "2 re-asks"),
    ],
)
def test_a_count_is_plural_unless_it_is_one(n: int, noun: str, shown: str) -> None:
    assert counted(n, noun) == shown


def test_a_plural_the_rules_miss_is_given() -> None:
    assert counted(1, "run with a mechanism", "runs with a mechanism") == "1 run with a mechanism"
    assert counted(4, "run with a mechanism", "runs with a mechanism") == "4 runs with a mechanism"


def test_a_count_groups_its_thousands() -> None:
    assert counted(10452, "step row") == "10,452 step rows"
    assert counted(1, "run") == "1 run"
