"""The Anthropic backend through the real SDK, against a local server speaking the Messages API."""

from __future__ import annotations

import json

import pytest

from agentlens.providers import ChatRequest, RetryPolicy, get_provider
from agentlens.providers.config import from_mapping
from tests.conftest import needed
from tests.providers.fault_server import COMPLETION_TOKENS, PROMPT_TOKENS, FaultServer

needed("anthropic", "pip install 'agentlens[anthropic]'")

FAST = RetryPolicy(max_attempts=4, base_delay_s=0.01, max_delay_s=0.05, timeout_s=5.0)
CONVERSATION = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "List the files."},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "a.py b.py"},
    {"role": "user", "content": "Which is Python?"},
]


def claude(server: FaultServer, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ANTHROPIC_TEST_KEY", "sk-ant-test")
    root = server.url.removesuffix("/v1")
    config = from_mapping(
        {"backends": {"anthropic": {"base_url": root, "api_key_env": "ANTHROPIC_TEST_KEY"}}}
    )
    return get_provider("anthropic:claude-haiku-4-5", config=config, cache=False, retry=FAST)


def test_messages_and_tools_are_translated(
    fault_server: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fault_server.queue("429:0.1", "500")
    client = claude(fault_server, monkeypatch)
    reply = client.chat_sync(ChatRequest(messages=CONVERSATION, max_tokens=50))
    assert reply.text == "re: Which is Python?"
    assert [r["action"] for r in fault_server.requests] == ["429:0.1", "500", "ok"]
    sent = fault_server.requests[-1]
    assert sent["path"] == "/v1/messages"
    # older SDKs send x-api-key, newer ones a bearer token
    assert "sk-ant-test" in (
        sent["headers"].get("x-api-key"),
        sent["headers"].get("authorization", "").removeprefix("Bearer "),
    )
    body = sent["body"]
    assert body["system"] == "Be brief." and body["max_tokens"] == 50
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user", "user"]
    assert body["messages"][1]["content"] == [
        {"type": "tool_use", "id": "call_1", "name": "ls", "input": {}}
    ]
    assert body["messages"][2]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "call_1",
        "content": "a.py b.py",
    }
    # cache reads are part of the prompt and reported as cached
    assert (reply.usage.prompt_tokens, reply.usage.cached_tokens) == (PROMPT_TOKENS + 4, 4)
    assert reply.usage.completion_tokens == COMPLETION_TOKENS


def test_json_schema_is_served_by_a_forced_tool(
    fault_server: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    client = claude(fault_server, monkeypatch)
    reply = client.chat_sync(
        ChatRequest(messages=[{"role": "user", "content": "A or B?"}], json_schema=schema)
    )
    assert json.loads(reply.text) == {"answer": "A"} and reply.tool_calls == []
    body = fault_server.requests[0]["body"]
    assert body["tool_choice"] == {"type": "tool", "name": "answer"}
    assert body["tools"] == [{"name": "answer", "input_schema": schema}]
