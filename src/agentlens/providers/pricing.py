"""Dollar cost of a call from a price table (shipped `prices.yaml` plus user overrides)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from agentlens.errors import ConfigError
from agentlens.providers.config_yaml import read_yaml
from agentlens.providers.types import TokenUsage

DATED = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")
"""A snapshot suffix (`-20250929`, `-2025-08-07`): the same model as the name without it."""


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens; `as_of`: when the price was read (YYYY-MM-DD)."""

    prompt: float
    completion: float
    cached: float
    as_of: str | None = None

    def cost(self, usage: TokenUsage) -> float:
        uncached = max(0, usage.prompt_tokens - usage.cached_tokens)
        dollars = (
            uncached * self.prompt
            + usage.cached_tokens * self.cached
            + usage.completion_tokens * self.completion
        )
        return dollars / 1_000_000


FREE = Price(0.0, 0.0, 0.0)


def user_prices_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "agentlens" / "prices.yaml"


class PriceTable:
    """Model name -> `Price`. A model matches its own entry only: exactly, or after dropping a
    router prefix (`openai/gpt-4.1`) or a snapshot date (`claude-sonnet-4-5-20250929`). Never a
    prefix: `gpt-5.4` is not `gpt-5`, and a newer model charged at an older one's rates would
    be a wrong number, where "unknown" is an honest one."""

    def __init__(self, prices: Mapping[str, Price]) -> None:
        self.prices = dict(prices)

    @classmethod
    def load(cls, overrides: Mapping[str, Any] | None = None) -> PriceTable:
        """Shipped table, then the user's `prices.yaml`, then `overrides` (later wins)."""
        text = resources.files("agentlens.providers").joinpath("prices.yaml").read_text()
        table = parse_prices(yaml.safe_load(text), "prices.yaml")
        user = user_prices_path()
        if user.is_file():
            table.update(parse_prices(read_yaml(user), str(user)))
        table.update(parse_prices(overrides or {}, "llm.prices"))
        return cls(table)

    def lookup(self, model: str) -> Price | None:
        for name in (model, model.rsplit("/", 1)[-1]):
            for candidate in (name, DATED.sub("", name)):
                if candidate in self.prices:
                    return self.prices[candidate]
        return None

    def cost(self, model: str, usage: TokenUsage) -> float | None:
        price = self.lookup(model)
        return None if price is None else price.cost(usage)


def parse_prices(raw: Any, origin: str) -> dict[str, Price]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{origin}: prices must map model names to {{prompt, completion}}")
    table = {}
    for model, entry in raw.items():
        try:
            table[str(model)] = Price(
                prompt=float(entry["prompt"]),
                completion=float(entry["completion"]),
                cached=float(entry.get("cached", entry["prompt"])),
                as_of=str(entry["as_of"]) if entry.get("as_of") else None,
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(
                f"{origin}: price of {model!r} needs numeric prompt and completion ({exc})"
            ) from exc
    return table
