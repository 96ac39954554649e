"""Value types of the provider seam: requests, responses, token usage and option log-probs.

msgspec Structs so that a response round-trips through the cache and the run ledger as JSON
without a hand-written schema.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from typing import Any, Literal

import msgspec

Message = dict[str, Any]
"""An OpenAI-style chat message: `{"role": "user", "content": "..."}`."""

LogprobSource = Literal["exact", "top_k", "floor"]
"""`exact`: read from the full next-token distribution; `top_k`: found in a top-k list;
`floor`: absent from the top-k list, so the floor value was used."""


class ChatRequest(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One chat completion. `json_schema` asks for schema-constrained output where supported.
    `temperature=None` leaves the model's default; reasoning models get their default anyway."""

    messages: list[Message]
    tools: list[dict[str, Any]] | None = None
    temperature: float | None = 0.0
    max_tokens: int | None = None
    stop: list[str] | None = None
    json_schema: dict[str, Any] | None = None
    seed: int | None = None
    top_logprobs: int | None = None
    """Ask for each generated token's log-prob and this many alternatives (where supported)."""


class TokenLogprob(msgspec.Struct, kw_only=True):
    """One generated token, its log-prob and the `top` alternatives at its position."""

    token: str
    logprob: float
    top: list[tuple[str, float]] = msgspec.field(default_factory=list)


class TokenUsage(msgspec.Struct, kw_only=True):
    """Tokens of one call. `cached_tokens` is the part of `prompt_tokens` served from a prompt cache."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class ChatResponse(msgspec.Struct, kw_only=True):
    """The answer to a `ChatRequest`. `cost` is in dollars, None when the price is unknown."""

    text: str
    tool_calls: list[dict[str, Any]] = msgspec.field(default_factory=list)
    usage: TokenUsage = msgspec.field(default_factory=TokenUsage)
    latency_s: float = 0.0
    cost: float | None = None
    model: str = ""
    from_cache: bool = False
    logprobs: list[TokenLogprob] | None = None
    """Per generated token, when the request asked for `top_logprobs` and the backend has them."""


class OptionLogprob(msgspec.Struct, kw_only=True):
    """Log-probability that `label` is the next token, and where the value came from."""

    label: str
    logprob: float
    source: LogprobSource
    variants: list[float] = msgspec.field(default_factory=list)
    """`top_k` only: the log-prob of each listed token that spells the label (" A", "A"), before
    they are merged, so a caller can re-apply another floor per variant."""


class OptionLogprobs(msgspec.Struct, kw_only=True):
    """Next-token log-probabilities of a set of option labels (e.g. "A".."D")."""

    options: dict[str, OptionLogprob]
    floor: float
    top_k: int | None
    usage: TokenUsage = msgspec.field(default_factory=TokenUsage)
    latency_s: float = 0.0
    cost: float | None = None
    model: str = ""
    from_cache: bool = False

    @property
    def logprobs(self) -> dict[str, float]:
        return {label: opt.logprob for label, opt in self.options.items()}

    @property
    def any_floored(self) -> bool:
        return any(opt.source == "floor" for opt in self.options.values())

    def probabilities(self) -> dict[str, float]:
        """The options renormalised among themselves (softmax of their log-probs)."""
        top = max(self.logprobs.values())
        weights = {k: math.exp(v - top) for k, v in self.logprobs.items()}
        total = sum(weights.values())
        return {k: w / total for k, w in weights.items()}


def logsumexp(values: Iterable[float]) -> float:
    """log(sum(exp(v))) computed stably; -inf for no values."""
    vals = list(values)
    if not vals:
        return -math.inf
    top = max(vals)
    if top == -math.inf:
        return top
    return top + math.log(sum(math.exp(v - top) for v in vals))


def match_label_logprobs(
    candidates: Iterable[tuple[str, float]], labels: Iterable[str]
) -> dict[str, list[float]]:
    """Group token log-probs by the label they spell once stripped (" A" and "A" both give "A")."""
    wanted = {label: [] for label in labels}  # type: dict[str, list[float]]
    for token, logprob in candidates:
        bucket = wanted.get(token.strip())
        if bucket is not None:
            bucket.append(logprob)
    return wanted


def request_key(provider_name: str, kind: str, payload: Any) -> str:
    """Content hash of (backend+model, call kind, full request): the cache and ledger key."""
    body = msgspec.json.encode(
        {"provider": provider_name, "kind": kind, "request": payload}, order="sorted"
    )
    return hashlib.sha256(body).hexdigest()
