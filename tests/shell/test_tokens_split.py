"""The paper labeler's operator split (one regex over quotes and operator characters) against the
plain character-by-character statement of the same rule, on random shell-like strings."""

from __future__ import annotations

import random

import pytest

from agentlens.shell.tokens import posix_words, split_outside_quotes

PIECES = [*"ab c./-=_'\"\\|&;<>\n\t", "&&", "||", "|&", "2>&1", "&>", ">&", " | ", "'a;b'", '"x|y"']
LEVELS = [("&&", "||", ";", "&", "\n"), ("|",)]


def _reference_split(text: str, operators: tuple[str, ...]) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    quote, i = "", 0
    while i < len(text):
        char = text[i]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        else:
            op = next((o for o in operators if text.startswith(o, i)), None)
            amp = char == "&" and (text[i - 1 : i] == ">" or text[i + 1 : i + 2] == ">")
            if op and not (op == "|" and text.startswith("||", i)) and not amp:
                parts.append("".join(current))
                current, i = [], i + len(op)
                continue
        current.append(char)
        i += 1
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


@pytest.mark.parametrize("operators", LEVELS, ids=["pipelines", "stages"])
def test_split_matches_the_character_loop(operators: tuple[str, ...]) -> None:
    rng = random.Random(20261130)
    lines = ["".join(rng.choices(PIECES, k=rng.randint(0, 30))) for _ in range(5000)]
    for line in lines:
        assert split_outside_quotes(line, operators) == _reference_split(line, operators), repr(
            line
        )


def test_quoted_operators_do_not_split() -> None:
    line = "grep -n 'a && b' f.py && echo \"x | y\" | wc -l"
    pipelines = split_outside_quotes(line, LEVELS[0])
    assert pipelines == ["grep -n 'a && b' f.py", 'echo "x | y" | wc -l']
    assert split_outside_quotes(pipelines[1], LEVELS[1]) == ['echo "x | y"', "wc -l"]


def test_word_split_matches_shlex() -> None:
    """The `str.split` shortcut gives what shlex (POSIX, no comments) gives, unbalanced quotes
    falling back to whitespace, including the whitespace characters only `str.split` splits on."""
    import shlex

    def reference(text: str) -> list[str]:
        try:
            return shlex.split(text, comments=False, posix=True)
        except ValueError:
            return text.split()

    rng = random.Random(7)
    odd_spaces = ["\x0b", "\x0c", "\x1c", "\x85", "\u00a0", "\u2003", "\r", "\t"]
    pieces = [*PIECES, *odd_spaces, "#", "x y", "cat "]
    for _ in range(20000):
        line = "".join(rng.choices(pieces, k=rng.randint(0, 15)))
        assert posix_words(line) == reference(line), repr(line)
