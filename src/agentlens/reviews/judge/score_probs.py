"""The probability-weighted score of a structured answer (G-Eval's expected value over the score
tokens), read from the log-probs of the tokens that spell the `"score"` value.

"0.5" starts with the same token as "0" in most tokenizers, so the distribution is read by the
chain rule: at the value's first token, P("1") against P("0…"); one token later, after a sampled
"0", P('"', i.e. 0) against P(".", i.e. 0.5). When the model chose "1" the split of the "0" mass
is never observed: the expected value is then given as a range, not a guess. Probabilities are
renormalised over the schema's three values (what a grammar allows); `valid_mass` is the share
the unconstrained model itself gave them. `spread` is the standard deviation of the score under
this distribution: 0 is a judge sure of its score, 0.5 one torn between 0 and 1."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentlens.providers.types import TokenLogprob

SCORE_KEY = re.compile(r'"score"\s*:\s*"')
VALUES = {"0": 0.0, "0.5": 0.5, "1": 1.0}


@dataclass
class ScoreDistribution:
    probabilities: dict[str, float]
    """Over "0", "0.5", "1"; or "0", "0 or 0.5", "0.5", "1" when the split was not observed."""
    valid_mass: float
    expected: float | None
    expected_range: tuple[float, float]
    spread: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "probabilities": {k: round(v, 4) for k, v in self.probabilities.items()},
            "valid_mass": round(self.valid_mass, 4),
            "expected_score": None if self.expected is None else round(self.expected, 4),
            "expected_range": [round(x, 4) for x in self.expected_range],
            "spread": None if self.spread is None else round(self.spread, 4),
        }


def score_distribution(tokens: Sequence[TokenLogprob] | None) -> ScoreDistribution | None:
    """The score distribution of an answer, or None when its log-probs do not reach the value."""
    if not tokens:
        return None
    text = "".join(t.token for t in tokens)
    matches = list(SCORE_KEY.finditer(text))
    if not matches:
        return None
    start = matches[-1].end()
    index, offset = _token_at(tokens, start)
    if index is None:
        return None
    head = _classify(tokens[index], offset, first=True)
    if not head:
        return None
    total = sum(head.values())
    raw_mass = total
    probs = {k: v / total for k, v in head.items()}
    ambiguous = probs.pop("0…", 0.0)
    chosen = _rest(tokens[index].token, offset)
    if ambiguous and chosen == "0" and index + 1 < len(tokens):
        split = _classify(tokens[index + 1], 0, first=False)
        if split:
            norm = sum(split.values())
            for key, mass in split.items():
                probs[key] = probs.get(key, 0.0) + ambiguous * mass / norm
            ambiguous = 0.0
    return _summary(probs, ambiguous, min(1.0, raw_mass))


def _token_at(tokens: Sequence[TokenLogprob], position: int) -> tuple[int | None, int]:
    """The token covering character `position` of the joined text, and the offset in it."""
    begin = 0
    for i, token in enumerate(tokens):
        end = begin + len(token.token)
        if begin <= position < end:
            return i, position - begin
        begin = end
    return None, 0


def _rest(token: str, offset: int) -> str:
    return token[offset:]


def _classify(token: TokenLogprob, offset: int, *, first: bool) -> dict[str, float]:
    """Probability mass of the schema-valid continuations at this token, by score value.

    `first`: the value's first token ("1", "0", "0.5"; "0…" is a bare "0" that may still become
    0.5); otherwise the token after a bare "0" ('"' ends it: 0, "." continues: 0.5)."""
    prefix = token.token[:offset]
    seen: dict[str, float] = {}
    for candidate, logprob in [(token.token, token.logprob), *token.top]:
        if candidate in seen or not candidate.startswith(prefix):
            continue
        seen[candidate] = logprob
    mass: dict[str, float] = {}
    for candidate, logprob in seen.items():
        key = _value(candidate[len(prefix) :], first)
        if key is not None:
            mass[key] = mass.get(key, 0.0) + math.exp(logprob)
    return mass


def _value(rest: str, first: bool) -> str | None:
    if not first:
        return "0" if rest.startswith('"') else "0.5" if rest.startswith(".") else None
    if rest == "0":
        return "0…"
    if rest.startswith('0"'):
        return "0"
    if rest.startswith("0.") and "0.5".startswith(rest[:3].rstrip('"')):
        return "0.5"
    if rest == "1" or rest.startswith('1"'):
        return "1"
    return None


def _summary(probs: dict[str, float], ambiguous: float, valid_mass: float) -> ScoreDistribution:
    sure = sum(VALUES[k] * p for k, p in probs.items())
    low, high = sure, sure + 0.5 * ambiguous
    if ambiguous:
        shown = {**probs, "0 or 0.5": ambiguous}
        return ScoreDistribution(shown, valid_mass, None, (low, high), None)
    mean = sure
    spread = math.sqrt(sum(p * (VALUES[k] - mean) ** 2 for k, p in probs.items()))
    ordered = {k: probs.get(k, 0.0) for k in VALUES}
    return ScoreDistribution(ordered, valid_mass, mean, (mean, mean), spread)
