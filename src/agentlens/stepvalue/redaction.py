"""Redaction of rendered states (spec §3) and the leakage guards on prompts and rationales (§4.1).

Keys that carry gold answers, labels, scores, run ids or secrets are dropped; string values are
masked. Two string policies: `whole` (the spec's behaviour: a string that mentions a secret marker
becomes `[REDACTED]`) for open-QA records, and `span` for coding trajectories, where only the
credential itself is masked, because source code mentions "token" or "password" on every page and
blanking whole observations would erase the evidence being measured.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from agentlens import redaction as secrets
from agentlens.errors import AgentLensError

StringPolicy = Literal["whole", "span"]
REDACTED = "[REDACTED]"
MASKED = "[MASKED]"

DROP_KEYS = frozenset(
    [
        "gold_candidate_id",
        "final_score",
        "success",
        "label",
        "label_source",
        "label_confidence",
        "request_id",
        "run_id",
        "timestamp",
        "trace_id",
        "reference_answer",
        "reference_answers",
        "gold_answer",
        "gold_answers",
        "correct_answer",
        "correct_answers",
        "expected_answer",
        "expected_answers",
        "answer_key",
        "llm_raw_response",
        "provider_raw_response",
        "raw_llm_response",
        "raw_provider_response",
    ]
)
SECRET_MARKERS = [
    "api_key",
    "apikey",
    "authorization",
    "bearer",
    "client_secret",
    "credential",
    "password",
    "private_key",
    "secret",
    "token",
]
SECRET_ALLOWED = [
    "prompt_hash",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "credential_env",
]
_MARKER_ALT = "|".join(SECRET_MARKERS)
SECRET_ASSIGNMENT = re.compile(
    rf"(?i)\b((?:[\w-]*(?:{_MARKER_ALT})[\w-]*)\s*[:=]\s*[\"']?)([^\s\"',;]{{6,}})"
)
BEARER = re.compile(r"(?i)\b(bearer\s+)([A-Za-z0-9._~+/=-]{8,})")
# `api_key=` / `api-key=` / `apikey=` in URLs and logs, any length (spec §3; the marker words
# alone miss `api-key`, whose hyphen is no underscore).
API_KEY = re.compile(r"(?i)\b(api[_-]?key\s*=\s*)([^&\s,;\"']+)")
KEY_SHAPES = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16})\b"
)
SECRET_WORD = re.compile(rf"(?i)({_MARKER_ALT})")
# Gold / label markers the prompt guard refuses; redaction masks them inside strings first.
GOLD_MARKERS = re.compile(
    r'(?i)gold_candidate_id|final_score|step_label|"label"\s*:|success\s*[:=]'
)


class LeakageError(AgentLensError):
    """A prompt or rationale would reveal the gold, a label or a physical option position."""


def normalise_key(key: str) -> str:
    return key.lower().replace("-", "_")


def drops_key(key: str) -> bool:
    """True for keys removed outright: gold/label/score/id keys, raw responses and secrets."""
    name = normalise_key(key)
    if name in DROP_KEYS:
        return True
    if any(allowed in name for allowed in SECRET_ALLOWED):
        return False
    return any(marker in name for marker in SECRET_MARKERS)


def redact(value: Any, policy: StringPolicy = "whole") -> Any:
    """A copy of `value` with dropped keys removed and strings masked (recursively)."""
    if isinstance(value, dict):
        return {k: redact(v, policy) for k, v in value.items() if not drops_key(str(k))}
    if isinstance(value, list | tuple):
        return [redact(v, policy) for v in value]
    if isinstance(value, str):
        return redact_text(value, policy)
    return value


def redact_text(text: str, policy: StringPolicy = "span") -> str:
    """Mask secrets and gold/label markers inside one string. Secrets go first through the
    project's one detector (`agentlens.redaction`: key shapes, private-key blocks, assignments),
    before anything here could cut a key short; the marker rules below are step value's own."""
    if policy == "whole" and SECRET_WORD.search(text) and not _only_allowed(text):
        return REDACTED
    if secrets.enabled():
        text = secrets.redact_text(text)
    text = BEARER.sub(lambda m: m[1] + REDACTED, text)
    text = API_KEY.sub(lambda m: m[1] + REDACTED, text)
    text = SECRET_ASSIGNMENT.sub(lambda m: m[1] + REDACTED, text)
    text = KEY_SHAPES.sub(REDACTED, text)
    return GOLD_MARKERS.sub(MASKED, text)


def _only_allowed(text: str) -> bool:
    lowered = text.lower()
    for allowed in SECRET_ALLOWED:
        lowered = lowered.replace(allowed, "")
    return not SECRET_WORD.search(lowered)


def guard_prompt(text: str) -> None:
    """Refuse a prompt that still carries a gold or label marker (spec §3 prompt guard)."""
    match = GOLD_MARKERS.search(text)
    if match:
        raise LeakageError(
            f"refusing to score a prompt containing the marker {match[0]!r}; redact the state first"
        )


POSITION_LEAK = re.compile(
    r"(?im)\b(?:option|candidate|label)\s+[a-z]\b"
    r"|\b(?:first|second|third|fourth)\s+(?:option|candidate)\b"
    r"|^\s*[a-z]\s*[:=]"
)
GOLD_LEAK = re.compile(r"(?i)\b(?:gold|answer\s*key|success\s*flag|final\s*score)\b")


def rationale_leaks(text: str) -> list[str]:
    """Leak kinds found in a rationale: `position` and/or `gold` (spec §4.1), and `marker` for a
    gold or label marker the prompt guard refuses (`"label":`, `success:`), which a rationale
    asked for JSON-like text can write."""
    kinds = []
    if POSITION_LEAK.search(text):
        kinds.append("position")
    if GOLD_LEAK.search(text):
        kinds.append("gold")
    if GOLD_MARKERS.search(text):
        kinds.append("marker")
    return kinds


def mask_markers(text: str) -> str:
    """`text` with the prompt guard's markers masked, as they are in the evidence."""
    return GOLD_MARKERS.sub(MASKED, text)


def rationale_coverage(text: str, candidate_ids: list[str]) -> float:
    """Fraction of candidate ids the rationale mentions."""
    if not candidate_ids:
        return 0.0
    return sum(1 for cid in candidate_ids if cid in text) / len(candidate_ids)
