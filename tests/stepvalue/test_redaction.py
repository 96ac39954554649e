from __future__ import annotations

import pytest

from agentlens.stepvalue.model import Candidate, EvalView
from agentlens.stepvalue.prompts import scoring_messages
from agentlens.stepvalue.redaction import (
    LeakageError,
    guard_prompt,
    rationale_coverage,
    rationale_leaks,
    redact,
    redact_text,
)


def test_gold_label_score_id_and_secret_keys_are_dropped() -> None:
    state = {
        "Gold-Candidate-Id": "x",
        "final_score": 1,
        "success": True,
        "run_id": "r1",
        "reference_answers": ["y"],
        "OPENAI_API_KEY": "sk-abc",
        "session_token": "t",
        "prompt_tokens": 12,
        "credential_env": "OPENAI_API_KEY",
        "llm_raw_response": {"text": "z"},
        "nested": [{"label": "supported", "evidence": "kept"}],
    }
    assert redact(state) == {
        "prompt_tokens": 12,
        "credential_env": "[REDACTED]",  # key allowed; its value names a secret marker
        "nested": [{"evidence": "kept"}],
    }


def test_string_policies() -> None:
    text = "export OPENAI_API_KEY=sk-live-1234567890abcdefXYZ; run tests"
    assert redact_text(text, "whole") == "[REDACTED]"
    masked = redact_text(text, "span")
    assert "sk-live" not in masked and "run tests" in masked
    assert "abcdef123456" not in redact_text("Authorization: Bearer abcdef123456", "span")
    assert redact_text("def tokenize(text): return text.split()", "span") == (
        "def tokenize(text): return text.split()"
    )
    assert redact_text('{"label": "x"} success: true', "span") == '{[MASKED] "x"} [MASKED] true'


def test_guard_refuses_gold_and_label_markers() -> None:
    for bad in ("gold_candidate_id", 'the "label": x', "success=1", "final_score", "step_label"):
        with pytest.raises(LeakageError):
            guard_prompt(f"state {bad}")
    guard_prompt("a clean prompt about labels and successes")


def test_scoring_prompt_built_from_an_unredacted_state_is_refused() -> None:
    view = EvalView("q?", (Candidate("x", "X"), Candidate("y", "Y")))
    with pytest.raises(LeakageError):
        scoring_messages(
            view, '{"gold_candidate_id": "x"}', None, {"A": "x", "B": "y"}, direct=True
        )


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("Option A fits the evidence", ["position"]),
        ("candidate b is weaker", ["position"]),
        ("the second option is weaker", ["position"]),
        ("  B: contradicted by the log", ["position"]),
        ("the gold answer is clear", ["gold"]),
        ("no answer key here", ["gold"]),
        ("models.py: supported by the traceback; sessions.py: missing", []),
    ],
)
def test_rationale_leak_checks(text: str, kinds: list[str]) -> None:
    assert rationale_leaks(text) == kinds


def test_rationale_coverage() -> None:
    assert rationale_coverage("resolved looks likely", ["resolved", "not-resolved"]) == 0.5


def test_api_key_query_values_and_raw_response_containers_are_removed() -> None:
    # spec §3: "api_key= patterns inside strings are also masked", whatever the spelling/length
    for policy in ("whole", "span"):
        url = "GET https://x.test/v1?api-key=abc12&q=1"
        assert redact_text(url, policy) == "GET https://x.test/v1?api-key=[REDACTED]&q=1"
        assert "k9" not in redact_text("retry with APIKEY = k9", policy)
    state = {"raw_llm_response": {"text": "z"}, "Raw-Provider-Response": "w", "kept": 1}
    assert redact(state) == {"kept": 1}
