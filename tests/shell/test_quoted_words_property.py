"""`quoted_words`, the classifier's shortcut for a line whose only shell syntax is quotes
(`grep -n "def f" a.py`), must split it exactly as the general tokenizer does: on every such
line of the real runs and on generated ones."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agentlens.shell import categories as cat
from agentlens.shell import tokens as sh
from tests.shell.test_categories_property import _analysed_text, _lines

# what a quotes-only line is made of: words, spaces, both quotes (balanced or not), `$`, `*`...
QUOTES_ONLY = st.text(alphabet=st.sampled_from(list("ab .-=/_'\"\t$*é\u2028\x1c")), max_size=40)


def _assert_same_split(line: str) -> None:
    assert not cat.COMPOUND.search(line)
    assert sh.quoted_words(line) == sh.words_and_operators(line)[0], line
    assert sh.words_and_operators(line)[1] == [], line


def test_quoted_words_match_the_tokenizer_on_real_lines() -> None:
    texts = [_analysed_text(line) for line in _lines()]
    quoted = [t for t in texts if cat.SHELL_SYNTAX.search(t) and not cat.COMPOUND.search(t)]
    assert len(quoted) > 100
    for text in quoted:
        _assert_same_split(text)


@settings(max_examples=2000, deadline=None)
@given(QUOTES_ONLY)
def test_quoted_words_match_the_tokenizer(line: str) -> None:
    _assert_same_split(line)
