"""Live calls to paid APIs: opt-in with `--run-paid` and the provider's key; never in CI."""

from __future__ import annotations

import os

import pytest

from agentlens.providers import ChatRequest, get_provider

pytestmark = pytest.mark.paid

QUESTION = [{"role": "user", "content": "Which is a fruit? A) car B) apple. Reply with A or B."}]


def needs_key(name: str) -> None:
    if not os.environ.get(name):
        pytest.skip(f"set {name} to run this paid test")


def test_openai_chat_and_option_logprobs() -> None:
    needs_key("OPENAI_API_KEY")
    client = get_provider("openai:gpt-4.1-nano", cache=False)
    reply = client.chat_sync(ChatRequest(messages=QUESTION, max_tokens=5))
    assert "B" in reply.text and reply.cost is not None and reply.cost > 0
    scores = client.option_logprobs_sync(QUESTION, ["A", "B"])
    assert scores.logprobs["B"] > scores.logprobs["A"]


def test_anthropic_chat() -> None:
    needs_key("ANTHROPIC_API_KEY")
    client = get_provider("anthropic:claude-haiku-4-5", cache=False)
    reply = client.chat_sync(ChatRequest(messages=QUESTION, max_tokens=5))
    assert "B" in reply.text and reply.usage.prompt_tokens > 0
