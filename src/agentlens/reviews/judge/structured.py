"""Structured judge answers: the JSON schema each dimension's answer is requested in (review,
evidence lines, score "0" / "0.5" / "1"; Pitfalls adds its pitfall lines), the parser that turns
such an answer into a `ParsedReview`, and the re-ask sent once after a malformed answer. The
field builders, the token bound, the JSON loading and the re-ask serve SxS answers too
(`sxs.structured`).

The schema is served by each backend's own mechanism: a GBNF grammar compiled from it for
llama.cpp, `response_format` for OpenAI-compatible servers, a forced tool call for Anthropic.
Length bounds keep a grammar-constrained answer shorter than `max_tokens`, so the score, the
last field, is never cut off (OpenAI's strict mode drops them; its models stop on their own)."""

from __future__ import annotations

import json
import math
from typing import Any

from agentlens.reviews.judge.parse import Evidence, ParsedReview, Pitfall, step_ids
from agentlens.reviews.sxs.mapping import burden_total

SCORES = {"0": 0.0, "0.5": 0.5, "1": 1.0}
SEVERITIES = ["low", "medium", "high"]
CATEGORIES = ["Logic/Code", "Tool/Harness", "Process/Interaction", "Other"]
REVIEW_CHARS = 500
FIELD_CHARS = 120
MAX_LINES = 3
CHARS_PER_TOKEN = 2.5  # prose is ~3.2 characters a token; JSON punctuation is denser


def text_field(limit: int) -> dict[str, Any]:
    return {"type": "string", "maxLength": limit}


def enum_field(values: list[str]) -> dict[str, Any]:
    return {"type": "string", "enum": values}


def object_schema(properties: dict[str, Any]) -> dict[str, Any]:
    """An object with every field required, in this order (a grammar writes them so)."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def lines_field(item: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"type": "array", "maxItems": MAX_LINES, "items": object_schema(item)}


def answer_schema(dimension: str) -> dict[str, Any]:
    """The JSON schema of a judge answer on `dimension` (the score is the last field, so the
    model writes its review before it scores, as the free-text format asks)."""
    evidence = {
        "aspect": text_field(60),
        "severity": enum_field(SEVERITIES),
        "evidence": text_field(FIELD_CHARS),
    }
    properties: dict[str, Any] = {
        "review": text_field(REVIEW_CHARS),
        "evidence": lines_field(evidence),
    }
    if dimension == "Pitfalls":
        properties["pitfalls"] = lines_field(
            {
                "pitfall": text_field(60),
                "category": enum_field(CATEGORIES),
                "severity": enum_field(SEVERITIES),
                "frequency": enum_field(["once", "repeated"]),
                "evidence": text_field(FIELD_CHARS),
                "mechanism": text_field(FIELD_CHARS),
            }
        )
    properties["score"] = enum_field(list(SCORES))
    return object_schema(properties)


def answer_token_bound(dimension: str) -> int:
    return token_bound(answer_schema(dimension))


def token_bound(schema: dict[str, Any]) -> int:
    """Tokens the longest answer the schema allows can take: the `max_tokens` a structured call
    needs, so a bounded answer always ends (with its score) before the limit."""
    return math.ceil(_chars(schema) / CHARS_PER_TOKEN) + 16


def _chars(schema: dict[str, Any]) -> int:
    if "enum" in schema:
        return max(len(str(v)) for v in schema["enum"]) + 2
    if schema.get("type") == "string":
        return int(schema.get("maxLength", 200)) + 2
    if schema.get("type") == "array":
        return 2 + int(schema.get("maxItems", 4)) * (_chars(schema["items"]) + 1)
    fields = schema.get("properties", {})
    return 2 + sum(len(k) + 4 + _chars(v) for k, v in fields.items())


def output_instructions(dimension: str) -> str:
    pitfalls = (
        '\n"pitfalls": up to 3 objects {"pitfall", "category", "severity", "frequency" '
        '(once or repeated), "evidence", "mechanism"}; a behavioural cluster counts once,'
        if dimension == "Pitfalls"
        else ""
    )
    return (
        "Answer with one JSON object only:\n"
        '"review": 2-5 sentences,\n'
        '"evidence": up to 3 objects {"aspect", "severity" (low, medium or high: absolute, how '
        'much the issue matters), "evidence" (the step ids, e.g. "S3, S7")},'
        f"{pitfalls}\n"
        '"score": "0", "0.5" or "1" as the scoring above says.'
    )


def parse_structured(text: str, n_steps: int | None = None) -> ParsedReview:
    """A schema answer as a `ParsedReview`; malformed JSON or a bad score is unscored, with
    the reason (the caller re-asks once)."""
    data, problem = load_object(text)
    if data is None:
        return _unscored(text, problem or "malformed JSON")
    raw = data.get("score")
    score = SCORES.get(str(raw).strip()) if isinstance(raw, str | int | float) else None
    if isinstance(raw, int | float) and not isinstance(raw, bool) and float(raw) in SCORES.values():
        score = float(raw)
    reason = None if score is not None else f"score {str(raw)[:20]!r} is not 0, 0.5 or 1"
    pitfalls = [_pitfall(p, n_steps) for p in objects(data.get("pitfalls"))]
    evidence = [_evidence(e, n_steps) for e in objects(data.get("evidence"))]
    rated = [(p.severity, p.repeated) for p in pitfalls if p.severity]
    return ParsedReview(
        score=score,
        unscored_reason=reason,
        review=_as_text(str(data.get("review") or ""), evidence, pitfalls),
        evidence=evidence,
        pitfalls=pitfalls,
        burden_total=burden_total(rated) if pitfalls else None,
        stated_burden_total=None,
    )


def load_object(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """A schema answer's JSON object, or None and what is wrong with it."""
    try:
        # strict=False: a raw newline or tab inside a string (llama.cpp's grammar lets them
        # through) is still the answer the model meant
        data = json.loads(text, strict=False)
    except json.JSONDecodeError as exc:
        return None, "empty answer" if not text.strip() else f"malformed JSON ({exc})"
    if not isinstance(data, dict):
        return None, "malformed JSON (not an object)"
    return data, None


SCORE_RULE = '"score" must be "0", "0.5" or "1"'


def reask(reason: str, dimension: str, structured: bool, score_rule: str = SCORE_RULE) -> str:
    """The one follow-up after an answer without a valid score, naming what was wrong."""
    form = (
        f"the JSON object only, exactly as asked; {score_rule}"
        if structured
        else "exactly the format asked, ending with <Score>0</Score>, <Score>0.5</Score> or "
        "<Score>1</Score>"
    )
    return (
        f"Your answer could not be used: {reason}. Answer again on the performance dimension "
        f"'{dimension}' with {form}."
    )


def _as_text(review: str, evidence: list[Evidence], pitfalls: list[Pitfall]) -> str:
    """The review as the free-text format writes it (its lines follow the prose), which is what
    SxS prompts and summaries quote."""
    lines = [review.strip()]
    lines += [
        f"Aspect: {e.aspect} | Severity: {e.severity} | Evidence: {e.evidence}" for e in evidence
    ]
    lines += [
        f"Pitfall: {p.name} | Category: {p.category} | Severity: {p.severity} | Frequency: "
        f"{'repeated' if p.repeated else 'once'} | Evidence: {p.evidence} | Mechanism: {p.mechanism}"
        for p in pitfalls
    ]
    return "\n".join(line for line in lines if line)


def _unscored(text: str, reason: str) -> ParsedReview:
    return ParsedReview(None, reason, text.strip(), [], [], None, None)


def objects(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def severity(value: Any) -> str | None:
    return value if value in SEVERITIES else None


def _evidence(item: dict[str, Any], n_steps: int | None) -> Evidence:
    cited = str(item.get("evidence") or "")
    known, unknown = step_ids(cited, n_steps)
    return Evidence(
        str(item.get("aspect") or ""), severity(item.get("severity")), cited, known, unknown
    )


def _pitfall(item: dict[str, Any], n_steps: int | None) -> Pitfall:
    cited = str(item.get("evidence") or "")
    known, _ = step_ids(cited, n_steps)
    return Pitfall(
        str(item.get("pitfall") or ""),
        item.get("category") if item.get("category") in CATEGORIES else None,
        severity(item.get("severity")),
        item.get("frequency") == "repeated",
        cited,
        known,
        str(item.get("mechanism") or "") or None,
    )
