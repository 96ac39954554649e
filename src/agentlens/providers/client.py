"""`LLMClient`: a Provider wrapped with cache, run ledger, budget, retries, bounded concurrency
and cost per role. It is itself a `Provider`, so callers can take either."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import msgspec

from agentlens.errors import BudgetExceededError, ConfigError, ProviderError
from agentlens.providers.batch import BatchResult
from agentlens.providers.budget import Budget
from agentlens.providers.cache import ResponseCache
from agentlens.providers.ledger import RunLedger
from agentlens.providers.pricing import PriceTable
from agentlens.providers.retry import RetryPolicy, call_with_retry
from agentlens.providers.types import (
    ChatRequest,
    ChatResponse,
    Message,
    OptionLogprobs,
    TokenUsage,
    request_key,
)
from agentlens.seams import Provider

T = TypeVar("T")
R = TypeVar("R", ChatResponse, OptionLogprobs)


@dataclass
class ClientStats:
    """What one client (one role) did: calls made, answers reused, tokens and dollars."""

    role: str
    calls: int = 0
    cache_hits: int = 0
    ledger_hits: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost: float = 0.0
    unpriced_calls: int = 0
    retries: int = 0
    """Attempts repeated after a timeout or a transient error (never for waiting in the queue:
    a call's timeout starts when it gets a slot)."""
    queued_s: float = 0.0
    """Seconds calls spent waiting for a slot, summed."""
    queued_calls: int = 0
    """Calls that took a slot (the ones `queued_s` sums over)."""
    retry_reasons: list[str] = field(default_factory=list)
    """Why each retry happened (e.g. "timed out after 120s"), in order."""

    def add(self, usage: TokenUsage, cost: float | None) -> None:
        self.calls += 1
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.cached_tokens += usage.cached_tokens
        if cost is None:
            self.unpriced_calls += 1
        else:
            self.cost += cost


class LLMClient:
    """Cache → ledger → budget → bounded, retried call → ledger record → cache store."""

    def __init__(
        self,
        provider: Provider,
        *,
        role: str = "default",
        cache: ResponseCache | None = None,
        ledger: RunLedger | None = None,
        budget: Budget | None = None,
        max_concurrency: int = 4,
        prices: PriceTable | None = None,
        retry: RetryPolicy | None = None,
        free: bool = False,
    ) -> None:
        self.provider = provider
        self.role = role
        self.cache = cache
        self.ledger = ledger
        self.budget = budget
        # a backend that generates one answer at a time (llama.cpp in-process) gets that many
        # slots, so queued calls wait here, before their timeout starts
        self.max_concurrency = min(
            max_concurrency, getattr(provider, "max_parallel", None) or max_concurrency
        )
        self.prices = prices or PriceTable.load()
        self.retry = retry or RetryPolicy()
        self.free = free
        self.stats = ClientStats(role)
        self._semaphores: dict[int, asyncio.Semaphore] = {}

    @property
    def name(self) -> str:
        return self.provider.name

    @property
    def cache_name(self) -> str:
        """What the cache and the ledger key a call by: the backend's own identity where it has
        one (a local model's file content), else its name."""
        return getattr(self.provider, "cache_name", None) or self.provider.name

    def check_ready(self) -> None:
        """A backend that can tell without a call (a missing key or model file) refuses now."""
        check = getattr(self.provider, "check_ready", None)
        if check is not None:
            check()

    @property
    def supports_logprobs(self) -> bool:
        return self.provider.supports_logprobs

    @property
    def supports_json_schema(self) -> bool:
        """Whether `ChatRequest.json_schema` constrains the answer (schema, grammar or forced
        tool call); a backend without the attribute gets free text."""
        return bool(getattr(self.provider, "supports_json_schema", False))

    async def chat(self, request: ChatRequest) -> ChatResponse:
        key = request_key(self.cache_name, "chat", request)
        return await self._call(key, "chat", ChatResponse, lambda: self.provider.chat(request))

    async def option_logprobs(
        self,
        messages: list[Message],
        labels: Sequence[str],
        *,
        floor: float = -20.0,
        top_k: int = 20,
    ) -> OptionLogprobs:
        payload = {"messages": messages, "labels": list(labels), "floor": floor, "top_k": top_k}
        key = request_key(self.cache_name, "option_logprobs", payload)

        def call() -> Awaitable[OptionLogprobs]:
            return self.provider.option_logprobs(messages, labels, floor=floor, top_k=top_k)

        return await self._call(key, "option_logprobs", OptionLogprobs, call)

    async def map(
        self, work: Callable[[Any], Awaitable[T]], items: Sequence[Any]
    ) -> BatchResult[T]:
        """Run `work(item)` for every item (concurrency bounded by this client); a spent budget
        stops the rest cleanly and the result says which items were not done."""
        outcome: BatchResult[T] = BatchResult([None] * len(items))

        async def one(index: int, item: Any) -> None:
            try:
                outcome.results[index] = await work(item)
            except BudgetExceededError as exc:
                outcome.not_done.append(index)
                outcome.stopped_reason = str(exc)
            except ProviderError as exc:
                outcome.errors[index] = str(exc)

        await asyncio.gather(*(one(i, item) for i, item in enumerate(items)))
        outcome.not_done.sort()
        return outcome

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine to completion from synchronous code (CLI commands)."""
        return asyncio.run(_settled(coro))

    def chat_sync(self, request: ChatRequest) -> ChatResponse:
        return self.run(self.chat(request))

    def option_logprobs_sync(
        self, messages: list[Message], labels: Sequence[str], **kw: Any
    ) -> OptionLogprobs:
        return self.run(self.option_logprobs(messages, labels, **kw))

    async def aclose(self) -> None:
        close = getattr(self.provider, "aclose", None)
        if close is not None:
            await close()

    async def _call(
        self, key: str, kind: str, type_: type[R], attempt: Callable[[], Awaitable[R]]
    ) -> R:
        reused = self._reuse(key, kind, type_)
        if reused is not None:
            return reused
        waiting = time.perf_counter()
        async with self._semaphore():
            self.stats.queued_s += time.perf_counter() - waiting
            self.stats.queued_calls += 1
            reused = self._reuse(key, kind, type_)  # a concurrent twin may have finished meanwhile
            if reused is not None:
                return reused
            if self.budget is not None:
                self.budget.check()
                self._check_priced()
            started = time.perf_counter()
            try:
                result = await call_with_retry(attempt, self.retry, self.name, self._count_retry)
            except ProviderError:
                self.stats.failures += 1
                raise
            result.latency_s = result.latency_s or time.perf_counter() - started
            result.cost = self._cost(result)
            await self._store(key, kind, result)
        return result

    def _count_retry(self, reason: str) -> None:
        self.stats.retries += 1
        self.stats.retry_reasons.append(reason)

    def _reuse(self, key: str, kind: str, type_: type[R]) -> R | None:
        raw = self.ledger.get(key) if self.ledger is not None else None
        in_ledger = raw is not None
        if not in_ledger and self.cache is not None:
            raw = self.cache.get(key)
        if raw is None:
            return None
        result = msgspec.json.decode(raw, type=type_)
        if in_ledger:
            self.stats.ledger_hits += 1
            if self.cache is not None and self.cache.get(key) is None:
                # killed between the ledger record and the cache write: a later run of the same
                # work would pay for this call again
                self.cache.put(key, self.name, kind, raw)
        else:
            self.stats.cache_hits += 1
            if self.ledger is not None:  # used by this run, but paid for by an earlier one
                self._record(key, "cache_hit", raw, result.usage, cost=0.0)
        result.from_cache = True
        return result

    async def _store(self, key: str, kind: str, result: R) -> None:
        raw = msgspec.json.encode(result)
        if self.ledger is not None:  # the fsync runs off the event loop; awaited before use
            await asyncio.to_thread(self._record, key, kind, raw, result.usage, cost=result.cost)
        if self.cache is not None:
            self.cache.put(key, self.name, kind, raw)
        self.stats.add(result.usage, result.cost)
        if self.budget is not None:
            self.budget.charge(result.cost, result.usage.total_tokens)

    def _record(
        self, key: str, kind: str, raw: bytes, usage: TokenUsage, *, cost: float | None
    ) -> None:
        assert self.ledger is not None
        self.ledger.record(
            key, role=self.role, provider=self.name, kind=kind, payload=raw, cost=cost, usage=usage
        )

    def _cost(self, result: ChatResponse | OptionLogprobs) -> float | None:
        return 0.0 if self.free else self.prices.cost(model_of(self.name), result.usage)

    def _check_priced(self) -> None:
        """A dollar budget cannot be kept for a model without a price: refuse before calling."""
        assert self.budget is not None
        unpriced = self.prices.lookup(model_of(self.name)) is None
        if self.budget.needs_prices and not self.free and unpriced:
            raise ConfigError(
                f"no price for {self.name!r} and a dollar budget is set: add the model to "
                "~/.config/agentlens/prices.yaml (or llm.prices), or use a token budget"
            )

    def _semaphore(self) -> asyncio.Semaphore:
        # One per event loop: sync helpers call asyncio.run repeatedly.
        loop = id(asyncio.get_running_loop())
        if loop not in self._semaphores:
            self._semaphores = {loop: asyncio.Semaphore(self.max_concurrency)}
        return self._semaphores[loop]


def model_of(name: str) -> str:
    """The model part of a model string: after '#' for URL forms, else after the first ':'."""
    if "#" in name:
        return name.rsplit("#", 1)[1]
    return name.split(":", 1)[1] if ":" in name else name


async def _settled(coro: Coroutine[Any, Any, T]) -> T:
    """`coro`'s result. When it fails, the calls it left running are cancelled and awaited here:
    left to `asyncio.run`, each that ends in the same error (a missing model file, found by a
    call finishing as it is cancelled) is logged with its traceback above the one error line."""
    try:
        return await coro
    except BaseException:
        current = asyncio.current_task()
        left = [task for task in asyncio.all_tasks() if task is not current]
        for task in left:
            task.cancel()
        await asyncio.gather(*left, return_exceptions=True)
        raise
