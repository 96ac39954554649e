"""A spending limit in dollars and/or tokens, shared by every client of a run."""

from __future__ import annotations

from dataclasses import dataclass

from agentlens.errors import BudgetExceededError


@dataclass
class Budget:
    """Stops new calls once `max_cost` dollars or `max_tokens` tokens are spent.

    Calls already in flight when the limit is reached still complete and are charged, so the
    overshoot is at most one call per concurrent slot.
    """

    max_cost: float | None = None
    max_tokens: int | None = None
    spent_cost: float = 0.0
    spent_tokens: int = 0

    def check(self) -> None:
        """Raise `BudgetExceededError` if no further call may start."""
        if self.max_cost is not None and self.spent_cost >= self.max_cost:
            raise BudgetExceededError(
                f"budget spent: ${self.spent_cost:.4f} of ${self.max_cost:.4f}",
                spent=self.spent_cost,
                limit=self.max_cost,
                unit="usd",
            )
        if self.max_tokens is not None and self.spent_tokens >= self.max_tokens:
            raise BudgetExceededError(
                f"budget spent: {self.spent_tokens} of {self.max_tokens} tokens",
                spent=self.spent_tokens,
                limit=self.max_tokens,
                unit="tokens",
            )

    def charge(self, cost: float | None, tokens: int) -> None:
        self.spent_cost += cost or 0.0
        self.spent_tokens += tokens

    @property
    def needs_prices(self) -> bool:
        return self.max_cost is not None
