"""SxS answer parsing (spec §8.2): the last `<PairwiseScore>` holds an integer in [−5, 5]; its
leading integer counts even with words after it, anything else is unscored (never a crash)."""

from __future__ import annotations

import pytest

from agentlens.reviews.sxs.parse import parse_comparison


@pytest.mark.parametrize(
    ("answer", "score"),
    [
        ("<PairwiseScore>-3</PairwiseScore>", -3),
        ("<PairwiseScore>−4</PairwiseScore>", -4),  # U+2212 minus
        ("<PairwiseScore>+2</PairwiseScore>", 2),
        ("<PairwiseScore>-3 (Agent 1 is better)</PairwiseScore>", -3),
        ("<PairwiseScore>**2**</PairwiseScore>", 2),
        ("<PairwiseScore>1</PairwiseScore> then <PairwiseScore>0</PairwiseScore>", 0),
    ],
)
def test_pairwise_score_is_the_leading_integer(answer: str, score: int) -> None:
    parsed = parse_comparison(answer)
    assert (parsed.score, parsed.unscored_reason) == (score, None)


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("<PairwiseScore>x3</PairwiseScore>", "score 'x3' is not an integer"),
        ("<PairwiseScore>2.5</PairwiseScore>", "score '2.5' is not an integer"),
        ("<PairwiseScore>7</PairwiseScore>", "score 7 outside [-5, 5]"),
        ("no tag at all", "no <PairwiseScore> tag"),
    ],
)
def test_bad_pairwise_scores_are_unscored_not_errors(answer: str, reason: str) -> None:
    parsed = parse_comparison(answer)
    assert (parsed.score, parsed.unscored_reason) == (None, reason)
