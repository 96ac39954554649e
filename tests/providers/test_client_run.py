"""`LLMClient.run`: a command's error is reported once, not again by every call it left running."""

from __future__ import annotations

import asyncio
import logging

import pytest

from agentlens.errors import ConfigError
from agentlens.providers.client import LLMClient
from agentlens.providers.types import ChatRequest, ChatResponse


class _MissingModel:
    """Failure injection: the first call fails at once (a GGUF path with a typo); a call that is
    cancelled while its answer was already failing ends with that error, as llama.cpp's does
    when `asyncio.wait_for` finds its finished call on the way out (Python 3.11)."""

    name = "scripted:missing"
    supports_logprobs = False

    def __init__(self) -> None:
        self.calls = 0

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        if self.calls == 1:
            raise ConfigError("/nope.gguf: GGUF model file not found")
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            raise ConfigError("/nope.gguf: GGUF model file not found") from None
        raise AssertionError("never answered")


def test_an_error_is_not_logged_again_by_the_calls_cancelled_after_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """`agentlens review RUNS --judge llamacpp:/nope.gguf` printed, now and then, a screen of
    `unhandled exception during asyncio.run() shutdown` tracebacks above its one error line."""
    client = LLMClient(_MissingModel(), max_concurrency=4)
    request = ChatRequest(messages=[{"role": "user", "content": "hi"}], max_tokens=1)

    async def review() -> list[ChatResponse]:
        return list(await asyncio.gather(*(client.chat(request) for _ in range(4))))

    with caplog.at_level(logging.ERROR, logger="asyncio"), pytest.raises(ConfigError):
        client.run(review())
    assert [r.getMessage() for r in caplog.records] == []
