"""The LLM seam: one `Provider` Protocol (`agentlens.seams`), one backend per file, and
`LLMClient` adding cache, run ledger, budget, retries, concurrency and cost per role.

    client = get_provider("openai-compatible:http://127.0.0.1:8011/v1#smollm2-135m", role="judge")
    answer = client.chat_sync(ChatRequest(messages=[{"role": "user", "content": "Hi"}]))
"""

from __future__ import annotations

import os
from pathlib import Path

from agentlens.errors import BudgetExceededError, CapabilityError, ConfigError, ProviderError
from agentlens.providers.batch import BatchResult
from agentlens.providers.budget import Budget
from agentlens.providers.cache import ResponseCache
from agentlens.providers.client import ClientStats, LLMClient, model_of
from agentlens.providers.config import ROLES, ProvidersConfig
from agentlens.providers.ledger import RunLedger
from agentlens.providers.pricing import PriceTable
from agentlens.providers.registry import is_local, make_backend
from agentlens.providers.retry import RetryPolicy
from agentlens.providers.types import (
    ChatRequest,
    ChatResponse,
    Message,
    OptionLogprob,
    OptionLogprobs,
    TokenUsage,
)
from agentlens.seams import Provider

__all__ = [
    "ROLES",
    "BatchResult",
    "Budget",
    "BudgetExceededError",
    "CapabilityError",
    "ChatRequest",
    "ChatResponse",
    "ClientStats",
    "LLMClient",
    "Message",
    "OptionLogprob",
    "OptionLogprobs",
    "Provider",
    "ProviderError",
    "ProvidersConfig",
    "ResponseCache",
    "RetryPolicy",
    "RunLedger",
    "TokenUsage",
    "get_provider",
    "make_backend",
    "model_of",
    "open_ledger",
]


def get_provider(
    model: str,
    *,
    role: str | None = None,
    config: ProvidersConfig | None = None,
    cache: bool = True,
    ledger: RunLedger | None = None,
    budget: Budget | None = None,
    max_concurrency: int | None = None,
    retry: RetryPolicy | None = None,
) -> LLMClient:
    """A ready client for a model string or a role name configured under `llm.roles`.

    `cache=False` (the `--no-cache` flag, or `AGENTLENS_NO_CACHE=1`) skips the response cache.
    The role's `budget_usd` / `budget_tokens` apply unless `budget` is given.
    """
    config = config or ProvidersConfig.load()
    named = config.role(model)
    if named is None and model in ROLES:
        raise ConfigError(
            f"role {model!r} has no model: set llm.roles.{model} in agentlens.yaml "
            f"or AGENTLENS_{model.upper()}_MODEL"
        )
    role = role or (model if named else "default")
    settings = named or config.role(role)
    model_string = named.model if named else model
    if budget is None and settings and (settings.budget_usd or settings.budget_tokens):
        budget = Budget(max_cost=settings.budget_usd, max_tokens=settings.budget_tokens)
    concurrency = (
        max_concurrency or (settings and settings.max_concurrency) or config.max_concurrency
    )
    return LLMClient(
        make_backend(model_string, config),
        role=role,
        cache=ResponseCache(config.cache_path) if cache and not _no_cache_env() else None,
        ledger=ledger,
        budget=budget,
        max_concurrency=concurrency,
        prices=PriceTable.load(config.prices),
        retry=retry or RetryPolicy(timeout_s=config.timeout_s),
        free=is_local(model_string),
    )


def open_ledger(run_id: str, config: ProvidersConfig | None = None) -> RunLedger:
    """The run ledger at `llm.ledger` (default `./.agentlens/ledger.sqlite`)."""
    path = (config.ledger_path if config else None) or Path(".agentlens") / "ledger.sqlite"
    return RunLedger(path, run_id)


def _no_cache_env() -> bool:
    return os.environ.get("AGENTLENS_NO_CACHE", "") not in ("", "0")
