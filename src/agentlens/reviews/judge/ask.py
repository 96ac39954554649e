"""One judge call and its samples, shared by single-run reviews and side-by-side comparisons:
the dimensions of an item (fixed, or a function of it), the request of sample k, and the call
that turns a provider failure into an answer-less result instead of an exception."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import msgspec

from agentlens.errors import ProviderError
from agentlens.providers import ChatRequest, ChatResponse, LLMClient, ProvidersConfig

K = TypeVar("K")

SAMPLE_TEMPERATURE = 0.7
"""Temperature of `--samples N` (N > 1) when the judge role sets none: at 0 the N answers would
be one answer repeated."""

PerItem = Sequence[str] | Callable[[K], Sequence[str]]
"""The dimensions of every item, or a function from an item (a trajectory, a pair key) to its own
(`--metric-set auto`)."""


def dimensions_of(dimensions: PerItem[K]) -> Callable[[K], Sequence[str]]:
    fixed = dimensions
    return dimensions if callable(dimensions) else lambda _item: fixed  # type: ignore[return-value]


def sample_request(request: ChatRequest, sample: int, temperature: float | None) -> ChatRequest:
    """Sample `sample` (0-based) of a call judged N > 1 times: its own seed, so the cache (keyed
    by the whole request) serves each sample its own answer, at the sampling temperature."""
    seed = (request.seed or 0) + sample
    return msgspec.structs.replace(request, seed=seed, temperature=temperature)


async def ask(client: LLMClient, request: ChatRequest) -> ChatResponse | ProviderError:
    """The answer, or the provider's failure (after the client's retries) to report as unscored."""
    try:
        return await client.chat(request)
    except ProviderError as exc:
        return exc


def sampling_temperature(configured: float | None, samples: int, default: float = 0.0) -> float:
    """The judge's temperature: the role's `temperature` when configured; else 0.7 for N > 1
    samples, `default` for one."""
    if configured is not None:
        return configured
    return SAMPLE_TEMPERATURE if samples > 1 else default


def configured_temperature(model: str, config: ProvidersConfig | None = None) -> float | None:
    """`llm.roles.<role>.temperature` of `--judge ROLE`, else of the `judge` role."""
    config = config or ProvidersConfig.load()
    role = config.role(model) or config.role("judge")
    return role.temperature if role else None
