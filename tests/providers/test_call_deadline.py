"""A hanging endpoint costs one call at most its total deadline, not attempts x timeout."""

from __future__ import annotations

import asyncio
import time

import pytest

from agentlens.errors import ProviderError
from agentlens.providers.retry import RetryableError, RetryPolicy, call_with_retry


def test_a_hanging_endpoint_gives_up_at_the_total_deadline() -> None:
    async def hang() -> str:
        await asyncio.sleep(3600)
        return "never"

    policy = RetryPolicy(max_attempts=6, timeout_s=10.0, base_delay_s=0.1, total_s=2.5)
    started = time.monotonic()
    with pytest.raises(ProviderError, match=r"the call's 2.5s deadline"):
        asyncio.run(call_with_retry(hang, policy, "p"))
    # an attempt the deadline does not cut short takes 10 s: a loaded host's delay is no 3.5 s
    assert time.monotonic() - started < 6.0


def test_a_retry_after_beyond_the_deadline_ends_the_call_now() -> None:
    async def busy() -> str:
        raise RetryableError("429", retry_after=120)

    started = time.monotonic()
    with pytest.raises(ProviderError, match="gave up after 1 attempt: "):
        asyncio.run(call_with_retry(busy, RetryPolicy(total_s=10), "p"))
    assert time.monotonic() - started < 1


def test_the_default_deadline_is_at_most_three_minutes() -> None:
    assert RetryPolicy().total_s <= 180
