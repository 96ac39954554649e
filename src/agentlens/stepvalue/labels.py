"""Label-token normalisation (spec §5.1 step 2, §5.2): a token counts for label ℓ when, stripped of
whitespace and then of the characters `.`, `)`, `:` and `：`, it equals ℓ — so "A", " A", "A.",
"A)", " A:" and "A：" all carry mass for A.

The provider matches a token to a requested label after stripping whitespace only, so the runner
asks for every punctuated spelling of each label and folds the answers back onto the label. The
spellings cover up to two of these characters after the label, or one before it (with at most one
after): tokenizers do not merge longer runs of punctuation with a single letter or digit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from agentlens.providers.types import OptionLogprob, logsumexp

STRIPPED = ".):："


def normalise_token(token: str) -> str:
    """The label a token spells (spec §5.1 step 2)."""
    return token.strip().strip(STRIPPED)


def spellings(label: str) -> list[str]:
    """`label` first, then its punctuated spellings (each normalises back to `label`)."""
    one = list(STRIPPED)
    two = [a + b for a in STRIPPED for b in STRIPPED]
    out = [label, *(label + s for s in one + two)]
    out += [p + label + s for p in one for s in ["", *one]]
    return out


def requested(labels: Iterable[str]) -> list[str]:
    """Every spelling of every label, to ask the provider for."""
    return [s for label in labels for s in spellings(label)]


@dataclass
class Folded:
    logprobs: dict[str, float] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    variants: dict[str, list[float]] = field(default_factory=dict)


def fold(options: Mapping[str, OptionLogprob], labels: Iterable[str], floor: float) -> Folded:
    """Per label: exact spellings merged by logsumexp (source exact); else the top-k token
    log-probs of all its spellings (source top_k, kept as variants); else the floor."""
    out = Folded()
    for label in labels:
        exact: list[float] = []
        listed: list[float] = []
        for spelling in spellings(label):
            option = options.get(spelling)
            if option is None or option.source == "floor":
                continue
            if option.source == "exact":
                exact.append(option.logprob)
            else:
                listed += option.variants or [option.logprob]
        if exact:
            value, source = logsumexp(exact), "exact"
        elif listed:
            value, source = logsumexp(listed), "top_k"
        else:
            value, source = floor, "floor"
        out.logprobs[label] = value
        out.sources[label] = source
        out.variants[label] = listed
    return out
