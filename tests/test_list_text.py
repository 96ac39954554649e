"""One line for a list cut short: the ATIF, OTel, conformity, verifier and `mcp` messages all
show the first few names, then ` (+k more)`."""

from __future__ import annotations

import pytest

from agentlens.list_text import first_few


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
