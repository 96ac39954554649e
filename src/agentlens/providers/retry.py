"""Retries with exponential backoff and jitter, honouring a server's `retry-after`."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from agentlens.errors import ProviderError
from agentlens.list_text import counted

T = TypeVar("T")


class RetryableError(Exception):
    """A transient failure (429, 5xx, timeout, reset connection, malformed body): try again."""

    def __init__(self, reason: str, *, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


@dataclass(frozen=True)
class RetryPolicy:
    """`timeout_s` bounds each attempt, `total_s` the call with all its attempts and waits (a
    hanging endpoint costs at most that, not `max_attempts` x `timeout_s`); `max_attempts` counts
    the first try. A server's `retry-after` is obeyed up to `max_retry_after_s`, beyond the
    backoff ceiling `max_delay_s`, within `total_s`."""

    max_attempts: int = 6
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    timeout_s: float = 120.0
    max_retry_after_s: float = 300.0
    total_s: float = 180.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before attempt `attempt + 1` (attempt counts from 1)."""
        if retry_after is not None:
            # The server said when; a little jitter keeps concurrent callers from re-colliding.
            return min(retry_after, self.max_retry_after_s) + random.uniform(
                0, self.base_delay_s / 4
            )
        ceiling = min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1))
        return random.uniform(ceiling / 2, ceiling)  # "equal jitter"


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a `retry-after` header (numeric form only; HTTP dates are rare for APIs)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


async def call_with_retry(
    attempt_call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    provider: str,
    on_retry: Callable[[str], None] | None = None,
) -> T:
    """Run `attempt_call` until it succeeds, retrying `RetryableError` and per-attempt timeouts
    (`on_retry(reason)` is told of each retry)."""
    last = "no attempt made"
    deadline = time.monotonic() + policy.total_s
    for attempt in range(1, policy.max_attempts + 1):
        timeout = min(policy.timeout_s, deadline - time.monotonic())
        try:
            return await asyncio.wait_for(attempt_call(), timeout=timeout)
        except TimeoutError:
            last, retry_after = f"timed out after {timeout:.3g}s", None
        except RetryableError as exc:
            last, retry_after = exc.reason, exc.retry_after
        wait = policy.delay(attempt, retry_after)
        if attempt < policy.max_attempts and time.monotonic() + wait >= deadline:
            raise ProviderError(
                provider,
                f"gave up after {counted(attempt, 'attempt')}: the call's {policy.total_s:g}s deadline "
                f"leaves no time for another; last: {last}",
            )
        if attempt < policy.max_attempts:
            if on_retry is not None:
                on_retry(last)
            await asyncio.sleep(wait)
    raise ProviderError(
        provider, f"gave up after {counted(policy.max_attempts, 'attempt')}; last: {last}"
    )
