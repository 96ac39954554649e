"""The run-level summary of one dimension (spec §5.5): an LLM regroups the single-run reviews'
evidence into 1–8 aspect groups and writes a summary of at most 400 words, citing the reviews
as `R<k>`. Citations are checked against the reviews given and mapped to trajectory ids, so a
report can link each `R<k>` to its trajectory ("evidence-linked narrative"); a citation of a
review that does not exist is listed, never linked."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentlens.errors import ProviderError
from agentlens.providers import ChatRequest, LLMClient
from agentlens.reviews.judge.judge import TrajectoryReview
from agentlens.reviews.judge.parse import REFUSAL

MAX_WORDS = 400
MAX_GROUPS = 8
SYSTEM = "You are a coding expert and an objective critic summarising reviews of AI coding agents."
INSTRUCTIONS = """Below are {n} reviews of single runs of one agent, on the dimension '{dimension}',
labelled R1 to R{n}. Regroup their evidence into 1-8 aspect groups (issues or strengths that recur
across runs). Use only what the reviews say; cite the reviews each group rests on as R<k>.
Answer in exactly this format:
<Summary>
Aspect group: <name> | Reviews: R<k>, R<k> | <one or two sentences>
(1-8 such lines)
Then a summary of at most 400 words that cites reviews as R<k>.
</Summary>"""
BODY = re.compile(r"<Summary>(.*?)(?:</Summary>|$)", re.IGNORECASE | re.DOTALL)
TAG = re.compile(r"</?Summary>", re.IGNORECASE)  # small models repeat the tag; not content
CITATION = re.compile(r"\bR(\d+)\b")
GROUP = re.compile(r"^\W*aspect group\s*:\s*(.*?)\s*\|\s*reviews?\s*:\s*(.*?)\s*\|", re.IGNORECASE)


@dataclass
class AspectGroup:
    name: str
    reviews: list[int]


@dataclass
class DimensionNarrative:
    """The summary of one dimension; `citations` maps each cited `k` to its trajectory id."""

    dimension: str
    text: str | None
    groups: list[AspectGroup] = field(default_factory=list)
    citations: dict[int, str] = field(default_factory=dict)
    unknown_citations: list[int] = field(default_factory=list)
    truncated: bool = False
    unscored_reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "dimension": self.dimension,
            "text": self.text,
            "groups": [{"name": g.name, "reviews": g.reviews} for g in self.groups],
            "citations": {f"R{k}": tid for k, tid in sorted(self.citations.items())},
            "unknown_citations": [f"R{k}" for k in self.unknown_citations],
            "truncated": self.truncated,
            "unscored_reason": self.unscored_reason,
        }


NO_TEXT = "no review text to summarise"
"""A dimension's narrative when no review had a text: no call was made."""


def summarized_reviews(
    reviews: Sequence[TrajectoryReview], dimension: str
) -> list[tuple[str, str]]:
    """(trajectory id, review text) of the reviews with a text on `dimension`; R<k> is the k-th."""
    out = []
    for review in reviews:
        dim = review.reviews.get(dimension)
        if dim is not None and dim.parsed is not None and dim.parsed.review.strip():
            score = "unscored" if dim.score is None else str(dim.score)
            out.append((review.trajectory_id, f"{dim.parsed.review.strip()}\nScore: {score}"))
    return out


def build_messages(dimension: str, items: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    listed = "\n\n".join(f"<R{k}>\n{text}\n</R{k}>" for k, (_, text) in enumerate(items, 1))
    user = f"{listed}\n\n{INSTRUCTIONS.format(n=len(items), dimension=dimension)}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def parse_narrative(
    dimension: str, answer: str, items: Sequence[tuple[str, str]]
) -> DimensionNarrative:
    """Aspect-group lines (at most 8), the prose capped at 400 words, and the citations."""
    match = BODY.search(answer)
    body = TAG.sub("", match.group(1)).strip() if match else ""
    if not body:
        reason = "empty <Summary>" if match else "no <Summary> tag"
        reason = reason if answer.strip() else "empty answer"
        return DimensionNarrative(dimension, None, unscored_reason=_refused(answer) or reason)
    group_lines: list[str] = []
    prose: list[str] = []
    for line in body.splitlines():
        (group_lines if GROUP.match(line) else prose).append(line.strip())
    words = " ".join(prose).split()
    text = "\n".join([*group_lines[:MAX_GROUPS], "", " ".join(words[:MAX_WORDS])]).strip()
    cited = sorted({int(k) for k in CITATION.findall(text)})
    known = {k: items[k - 1][0] for k in cited if 1 <= k <= len(items)}
    groups = []
    for line in group_lines[:MAX_GROUPS]:
        found = GROUP.match(line)
        assert found is not None
        ks = [int(k) for k in CITATION.findall(found.group(2))]
        groups.append(AspectGroup(found.group(1), [k for k in ks if k in known]))
    unknown = [k for k in cited if k not in known]
    return DimensionNarrative(
        dimension, text, groups, known, unknown, truncated=len(words) > MAX_WORDS
    )


def _refused(answer: str) -> str | None:
    return "refused" if REFUSAL.search(answer) else None


async def summarize(
    client: LLMClient,
    dimension: str,
    reviews: Sequence[TrajectoryReview],
    *,
    max_tokens: int = 900,
) -> DimensionNarrative:
    """One LLM call for `dimension` over the reviews that have a text."""
    items = summarized_reviews(reviews, dimension)
    if not items:
        return DimensionNarrative(dimension, None, unscored_reason=NO_TEXT)
    request = ChatRequest(messages=build_messages(dimension, items), max_tokens=max_tokens, seed=42)
    try:
        answer = await client.chat(request)
    except ProviderError as exc:
        return DimensionNarrative(dimension, None, unscored_reason=f"provider error: {exc}")
    return parse_narrative(dimension, answer.text, items)
