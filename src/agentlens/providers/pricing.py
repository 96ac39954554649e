"""Dollar cost of a call from a price table (shipped `prices.yaml` plus user overrides)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from agentlens.errors import ConfigError
from agentlens.providers.config_yaml import read_yaml
from agentlens.providers.types import TokenUsage


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens."""

    prompt: float
    completion: float
    cached: float

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
    """Model name -> `Price`; exact match first, then the longest listed prefix."""

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
        if model in self.prices:
            return self.prices[model]
        prefixes = [name for name in self.prices if model.startswith(name)]
        return self.prices[max(prefixes, key=len)] if prefixes else None

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
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(
                f"{origin}: price of {model!r} needs numeric prompt and completion ({exc})"
            ) from exc
    return table
