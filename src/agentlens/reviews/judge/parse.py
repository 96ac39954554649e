"""Parse a judge answer: the last `<Score>` (0, 0.5 or 1), the `<Review>` text, evidence lines
(`Aspect | Severity | Evidence`) with the step ids they cite, and Pitfalls lines with category,
severity, frequency and the burden total. An answer without a valid score is *unscored* (never 0)
and says why: refused, empty, no `<Score>` tag, or a value outside {0, 0.5, 1}."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agentlens.reviews.sxs.mapping import SEVERITY_POINTS, burden_total

SCORE = re.compile(r"<Score>\s*(.*?)\s*(?:</Score>|$)", re.IGNORECASE | re.DOTALL)
REVIEW = re.compile(r"<Review>(.*?)(?:</Review>|<Score>|$)", re.IGNORECASE | re.DOTALL)
STEP_ID = re.compile(r"\bS(\d+)\b|\bsteps? (\d+)\b", re.IGNORECASE)
STEP_RANGE = re.compile(r"(?:\bS|\bsteps? )(\d+)\s*[–-]\s*S?(\d+)\b", re.IGNORECASE)
BURDEN = re.compile(r"BurdenTotal\s*[:=]\s*(\d+)", re.IGNORECASE)
REFUSAL = re.compile(r"\b(I can(?:no|')t|I am unable|I'm unable|as an AI)\b", re.IGNORECASE)
# The score is the leading token of the last <Score>, after markup and a "Score:" label; words
# after it ("0.5 (tolerable)") and a "/1" denominator are fine, a list of alternatives
# ("0 or 0.5 or 1", the format line echoed back) is not a score.
LEADING = re.compile(
    r"(?:score\s*[:=]\s*)?(0\.50?|0\.00?|1\.00?|\.5|0|1)(?!\d|\.\d)", re.IGNORECASE
)
DENOMINATOR = re.compile(r"\s*(?:/|out of)\s*1(?:\.0)?(?![\d./])", re.IGNORECASE)
ALTERNATIVES = re.compile(r"\s*(?:,|/|\||\bor\b)\s*\.?\d", re.IGNORECASE)


@dataclass
class Evidence:
    aspect: str
    severity: str | None
    evidence: str
    step_ids: list[int]
    unknown_step_ids: list[int] = field(default_factory=list)


@dataclass
class Pitfall:
    name: str
    category: str | None
    severity: str | None
    repeated: bool
    evidence: str
    step_ids: list[int]
    mechanism: str | None = None


@dataclass
class ParsedReview:
    score: float | None
    unscored_reason: str | None
    review: str
    evidence: list[Evidence]
    pitfalls: list[Pitfall]
    burden_total: int | None
    stated_burden_total: int | None


def parse_score(text: str) -> tuple[float | None, str | None]:
    if not text.strip():
        return None, "empty answer"
    found = SCORE.findall(text)
    if not found:
        reason = "refused" if REFUSAL.search(text) else "no <Score> tag"
        return None, reason
    raw = found[-1].strip().strip("*_`").strip()
    match = LEADING.match(raw)
    rest = raw[match.end() :] if match else ""
    if match and (DENOMINATOR.match(rest) or not ALTERNATIVES.match(rest)):
        return float(match.group(1)), None
    return None, f"score {raw[:20]!r} is not 0, 0.5 or 1"


def step_ids(text: str, n_steps: int | None = None) -> tuple[list[int], list[int]]:
    """Step ids cited in `text` (ranges expanded), split into known and unknown ones."""
    ids: set[int] = set()
    for a, b in STEP_RANGE.findall(text):
        lo, hi = sorted((int(a), int(b)))
        ids.update(range(lo, min(hi, lo + 200) + 1))
    for a, b in STEP_ID.findall(text):
        ids.add(int(a or b))
    known = sorted(i for i in ids if n_steps is None or i < n_steps)
    return known, sorted(ids - set(known))


def _fields(line: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in line.split("|"):
        key, sep, value = part.partition(":")
        if sep:
            out[key.strip().strip("-* ").lower()] = value.strip()
    return out


def _severity(value: str | None) -> str | None:
    if not value:
        return None
    word = value.lower().split()[0].strip(".,;") if value.split() else ""
    return word if word in SEVERITY_POINTS else None


def parse_review(text: str, n_steps: int | None = None) -> ParsedReview:
    score, reason = parse_score(text)
    body_match = REVIEW.search(text)
    body = (body_match.group(1) if body_match else text).strip()
    evidence, pitfalls = [], []
    for line in body.splitlines():
        f = _fields(line)
        if "pitfall" in f:
            known, _ = step_ids(f.get("evidence", ""), n_steps)
            pitfalls.append(
                Pitfall(
                    f["pitfall"],
                    f.get("category"),
                    _severity(f.get("severity")),
                    f.get("frequency", "").lower().startswith("repeat"),
                    f.get("evidence", ""),
                    known,
                    f.get("mechanism"),
                )
            )
        elif "aspect" in f:
            known, unknown = step_ids(f.get("evidence", ""), n_steps)
            evidence.append(
                Evidence(
                    f["aspect"], _severity(f.get("severity")), f.get("evidence", ""), known, unknown
                )
            )
    rated = [(p.severity, p.repeated) for p in pitfalls if p.severity]
    stated = BURDEN.findall(text)
    return ParsedReview(
        score=score,
        unscored_reason=reason,
        review=body,
        evidence=evidence,
        pitfalls=pitfalls,
        # a pitfall of no known severity has no points: the lines' sum would undercount (0 for
        # "severe"), so the burden is the judge's stated total, or unknown
        burden_total=burden_total(rated) if pitfalls and len(rated) == len(pitfalls) else None,
        stated_burden_total=int(stated[-1]) if stated else None,
    )
