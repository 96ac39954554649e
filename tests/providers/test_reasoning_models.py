"""OpenAI reasoning models (o1/o3/o4-mini, gpt-5.x) accept only their default temperature and take
`max_completion_tokens`: the request a judge sends them must leave both out or renamed, over HTTP to
a real local server that records what it receives."""

from __future__ import annotations

import pytest

from agentlens.providers import ChatRequest, get_provider
from agentlens.providers.openai_compatible import is_reasoning_model
from tests.providers.fault_server import FaultServer


@pytest.mark.parametrize(
    ("model", "reasoning"),
    [
        ("gpt-5.4", True),
        ("openai/gpt-5-mini", True),
        ("o3", True),
        ("o4-mini", True),
        ("gpt-4.1", False),
        ("gpt-4o-mini", False),
        ("smollm2-135m", False),
        ("deepseek-chat", False),
        ("olmo-2", False),
    ],
)
def test_reasoning_models_are_told_by_name(model: str, reasoning: bool) -> None:
    assert is_reasoning_model(model) is reasoning


def test_judge_settings_reach_reasoning_models_as_they_accept_them(
    fault_server: FaultServer,
) -> None:
    request = ChatRequest(
        messages=[{"role": "user", "content": "q"}], temperature=0.0, max_tokens=20, seed=42
    )
    for model in ("gpt-5.4", "gpt-4.1"):
        get_provider(fault_server.model(model), cache=False).chat_sync(request)
    reasoning, plain = (r["body"] for r in fault_server.requests)
    assert "temperature" not in reasoning and "max_tokens" not in reasoning
    assert reasoning["max_completion_tokens"] == 20 and reasoning["seed"] == 42
    assert plain["temperature"] == 0.0 and plain["max_tokens"] == 20


def test_no_temperature_means_the_model_default(fault_server: FaultServer) -> None:
    request = ChatRequest(messages=[{"role": "user", "content": "q"}], temperature=None)
    get_provider(fault_server.model("gpt-4.1"), cache=False).chat_sync(request)
    assert "temperature" not in fault_server.requests[0]["body"]
