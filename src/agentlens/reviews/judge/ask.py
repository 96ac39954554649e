"""One judge call and its samples, shared by single-run reviews and side-by-side comparisons:
the dimensions of an item (fixed, or a function of it), the request of sample k, the call that
turns a provider failure into an answer-less result instead of an exception, and the one re-ask
after an answer without a valid score."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

import msgspec

from agentlens.errors import ProviderError
from agentlens.providers import ChatRequest, ChatResponse, LLMClient, ProvidersConfig

K = TypeVar("K")


class Verdict(Protocol):
    """A parsed answer: its score, or None and why (a review's 0/0.5/1, a comparison's −5…5)."""

    @property
    def score(self) -> float | None: ...

    @property
    def unscored_reason(self) -> str | None: ...


V = TypeVar("V", bound=Verdict)

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


@dataclass
class Asked(Generic[V]):
    """The last answer that came back, parsed (None if the first call failed), the attempt it
    came from, the usage summed over all attempts, and the provider's failure if a call failed."""

    parsed: V | None
    response: ChatResponse | None = None
    attempts: int = 0
    usage: dict[str, int] = field(
        default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0}
    )
    failure: ProviderError | None = None


async def ask_scored(
    client: LLMClient,
    request: ChatRequest,
    parse: Callable[[str], V],
    follow_up: Callable[[str], str] | None = None,
    settled: Callable[[V], bool] | None = None,
) -> Asked[V]:
    """Ask; with `follow_up`, ask once more after an answer that is not `settled` (default:
    without a valid score), showing it and the user message `follow_up(reason)` (a schema
    answer; free text is parsed as is)."""
    asked: Asked[V] = Asked(None)
    for attempt in (1, 2):
        answer = await ask(client, request)
        if isinstance(answer, ProviderError):
            asked.failure = answer
            break
        asked.usage["prompt_tokens"] += answer.usage.prompt_tokens
        asked.usage["completion_tokens"] += answer.usage.completion_tokens
        asked.parsed, asked.response, asked.attempts = parse(answer.text), answer, attempt
        done = settled(asked.parsed) if settled else asked.parsed.score is not None
        if done or follow_up is None or attempt == 2:
            break
        reason = asked.parsed.unscored_reason or "no score"
        again = [
            {"role": "assistant", "content": answer.text},
            {"role": "user", "content": follow_up(reason)},
        ]
        request = msgspec.structs.replace(request, messages=[*request.messages, *again])
    return asked
