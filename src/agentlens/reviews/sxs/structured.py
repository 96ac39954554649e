"""Structured SxS answers: the JSON schema a pairwise answer is requested in (a short comparison,
up to 3 aspect lines with their winner, then the score, an integer from −5 to 5, last), its parser
into the `ParsedComparison` the tagged format gives, and the re-ask after an answer without a
valid score. Served, bounded and re-asked as single-run answers are (`judge.structured`): the
score comes last, after the reasoning, and the token bound keeps it inside `max_tokens`."""

from __future__ import annotations

import re
from typing import Any

from agentlens.reviews.judge.structured import (
    SEVERITIES,
    enum_field,
    lines_field,
    load_object,
    object_schema,
    objects,
    reask,
    severity,
    text_field,
    token_bound,
)
from agentlens.reviews.sxs.parse import WINNERS, ComparisonLine, ParsedComparison

SCORES = list(range(-5, 6))
COMPARISON_CHARS = 300
LINE_CHARS = 60
SCORE_RULE = '"score" must be an integer from -5 to 5'


def pairwise_schema() -> dict[str, Any]:
    line = {
        "aspect": text_field(LINE_CHARS),
        "winner": enum_field(["A1", "A2", "Tie"]),
        "severity": enum_field(SEVERITIES),
        "evidence": text_field(LINE_CHARS),
    }
    return object_schema(
        {
            "comparison": text_field(COMPARISON_CHARS),
            "lines": lines_field(line),
            "score": {"type": "integer", "enum": SCORES},
        }
    )


def pairwise_token_bound() -> int:
    return token_bound(pairwise_schema())


def output_instructions() -> str:
    return (
        "Answer with one JSON object only:\n"
        '"comparison": 2-4 short sentences,\n'
        '"lines": up to 3 objects {"aspect", "winner" (A1, A2 or Tie), "severity" (low, medium '
        'or high, relative), "evidence" (step ids, e.g. "A1 S3, A2 S7")},\n'
        '"score": an integer from -5 to 5, negative when Agent 1 is better; |4-5| only for '
        "stark contrasts."
    )


def pitfalls_instruction(line: str) -> str:
    return (
        "Pitfalls score is fixed by the burden totals of the two reviews. Quote this line in "
        f'"comparison" and give its score as "score":\n{line}'
    )


def parse_pairwise(text: str) -> ParsedComparison:
    """A schema answer as a `ParsedComparison`; malformed JSON or a score outside the integers
    −5…5 is unscored, with the reason (the caller re-asks once)."""
    data, problem = load_object(text)
    if data is None:
        return ParsedComparison(None, problem, text.strip(), [], malformed=True)
    score = _score(data.get("score"))
    raw = str(data.get("score"))[:20]
    reason = None if score is not None else f"score {raw!r} is not an integer from -5 to 5"
    lines = [_line(item) for item in objects(data.get("lines"))]
    return ParsedComparison(
        score, reason, _as_text(str(data.get("comparison") or ""), lines), lines
    )


def pairwise_reask(reason: str, dimension: str) -> str:
    return reask(reason, dimension, True, SCORE_RULE)


WHOLE_NUMBER = re.compile(r"[+-]?\d+")


def _score(raw: Any) -> int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, float) and raw.is_integer():
        raw = int(raw)
    if isinstance(raw, str):
        raw = raw.strip().replace("−", "-")
        raw = int(raw) if WHOLE_NUMBER.fullmatch(raw) else None
    return raw if isinstance(raw, int) and raw in SCORES else None


def _line(item: dict[str, Any]) -> ComparisonLine:
    winner = WINNERS.get(str(item.get("winner") or "").lower().strip(" ."))
    evidence = str(item.get("evidence") or "")
    return ComparisonLine(
        str(item.get("aspect") or ""), winner, severity(item.get("severity")), evidence
    )


def _as_text(comparison: str, lines: list[ComparisonLine]) -> str:
    """The comparison as the tagged format writes it (its lines follow the prose), which is what
    the released judge alert quotes."""
    rows = [comparison.strip()]
    rows += [
        f"Aspect: {x.aspect} | Winner: {x.winner or '?'} | Severity: {x.severity or '?'} | "
        f"Evidence: {x.evidence}"
        for x in lines
    ]
    return "\n".join(row for row in rows if row)
