"""Parse an SxS answer: comparison lines (aspect, winner, severity, evidence) and the last
`<PairwiseScore>`, an integer in [−5, 5]. Anything else leaves the score unscored (None)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentlens.reviews.judge.parse import REFUSAL, _fields, _severity

SCORE = re.compile(r"<PairwiseScore>\s*(.*?)\s*(?:</PairwiseScore>|$)", re.IGNORECASE | re.DOTALL)
BODY = re.compile(
    r"<Comparison>(.*?)(?:</Comparison>|<PairwiseScore>|$)", re.IGNORECASE | re.DOTALL
)
# The leading integer of the last <PairwiseScore> (after markup and a "Score:" label); words after
# it ("-3 (Agent 1 better)") are fine, a decimal ("2.5") is not an integer score.
INTEGER = re.compile(r"(?:score\s*[:=]\s*)?([+-]?\d+)(?!\d|\.\d)", re.IGNORECASE)
WINNERS = {"a1": "A1", "agent 1": "A1", "a2": "A2", "agent 2": "A2", "tie": "Tie"}


@dataclass
class ComparisonLine:
    aspect: str
    winner: str | None
    severity: str | None
    evidence: str


@dataclass
class ParsedComparison:
    score: int | None
    unscored_reason: str | None
    comparison: str
    lines: list[ComparisonLine]
    attempts: int = 1
    """2 when a schema answer had no valid score and the judge was asked once more."""
    malformed: bool = False
    """A schema answer that is no JSON object: nothing of it is usable, the score or the rest."""


def parse_comparison(text: str) -> ParsedComparison:
    body_match = BODY.search(text)
    body = (body_match.group(1) if body_match else "").strip()
    lines = []
    for raw in body.splitlines():
        f = _fields(raw)
        if "aspect" in f:
            winner = WINNERS.get(f.get("winner", "").lower().strip(" ."))
            lines.append(
                ComparisonLine(
                    f["aspect"], winner, _severity(f.get("severity")), f.get("evidence", "")
                )
            )
    score, reason = _score(text)
    return ParsedComparison(score, reason, body, lines)


def _score(text: str) -> tuple[int | None, str | None]:
    if not text.strip():
        return None, "empty answer"
    found = SCORE.findall(text)
    if not found:
        return None, "refused" if REFUSAL.search(text) else "no <PairwiseScore> tag"
    raw = found[-1].strip().strip("*_`").strip().replace("−", "-")
    match = INTEGER.match(raw)
    if not match:
        return None, f"score {raw[:20]!r} is not an integer"
    value = int(match.group(1))
    if not -5 <= value <= 5:
        return None, f"score {value} outside [-5, 5]"
    return value, None
