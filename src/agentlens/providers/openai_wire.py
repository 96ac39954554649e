"""The OpenAI wire format: status handling, usage, and option log-probs from top-k lists.
Shared by the HTTP backend and the in-process llama.cpp backend (same response shapes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
import orjson

from agentlens.errors import ProviderError
from agentlens.providers.retry import RetryableError, parse_retry_after
from agentlens.providers.types import (
    OptionLogprob,
    TokenLogprob,
    TokenUsage,
    logsumexp,
    match_label_logprobs,
)


def raise_for_status(name: str, response: httpx.Response, key_env: str | None = None) -> None:
    status = response.status_code
    if status < 400:
        return
    # llama.cpp's server answers 500 to a request it cannot validate: that is not transient.
    if status == 429 or (status >= 500 and b"response_format" not in response.content):
        retry_after = parse_retry_after(response.headers.get("retry-after"))
        raise RetryableError(f"HTTP {status}", retry_after=retry_after)
    hint = f" (check {key_env or 'the API key'})" if status in (401, 403) else ""
    raise ProviderError(name, f"HTTP {status}{hint}: {error_text(response)}", status=status)


def error_text(response: httpx.Response) -> str:
    """The server's error message, with a key it quotes back masked, then cut to 300 characters
    (`redaction.masked_head`: no key cut where the masking would miss it, no mark split): it
    reaches the terminal and the outputs."""
    from agentlens import redaction

    try:
        error = orjson.loads(response.content).get("error")
        message = error.get("message") if isinstance(error, dict) else error
    except (orjson.JSONDecodeError, AttributeError):
        message = response.text
    text = str(message)
    return redaction.masked_head(text, 300)


def first_choice(name: str, data: dict[str, Any]) -> dict[str, Any]:
    choices = data.get("choices")
    if not choices or not isinstance(choices[0], dict):
        raise RetryableError(f"{name}: response without choices")
    return choices[0]


def parse_usage(raw: Any) -> TokenUsage:
    if not isinstance(raw, dict):
        return TokenUsage()
    details = raw.get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens") or raw.get("prompt_cache_hit_tokens") or 0
    return TokenUsage(
        prompt_tokens=int(raw.get("prompt_tokens") or 0),
        completion_tokens=int(raw.get("completion_tokens") or 0),
        cached_tokens=int(cached),
    )


def first_token_candidates(name: str, choice: dict[str, Any]) -> list[tuple[str, float]]:
    """(token, logprob) pairs for the first generated token: the token itself and its top-k."""
    content = (choice.get("logprobs") or {}).get("content")
    if not content:
        raise ProviderError(name, "server returned no log-probs (does it support `logprobs`?)")
    first = content[0]
    pairs = {first["token"]: float(first["logprob"])}
    for alt in first.get("top_logprobs") or []:
        pairs[alt["token"]] = float(alt["logprob"])
    return list(pairs.items())


def options_from_top_k(
    candidates: list[tuple[str, float]], labels: Sequence[str], floor: float
) -> dict[str, OptionLogprob]:
    """Label variants (" A", "A") merged by logsumexp; a label absent from the list gets `floor`."""
    options = {}
    for label, values in match_label_logprobs(candidates, labels).items():
        if values:
            options[label] = OptionLogprob(
                label=label, logprob=logsumexp(values), source="top_k", variants=values
            )
        else:
            options[label] = OptionLogprob(label=label, logprob=floor, source="floor")
    return options


def token_logprobs(choice: dict[str, Any]) -> list[TokenLogprob] | None:
    """The generated tokens' log-probs and alternatives of a chat choice, if it has them."""
    content = (choice.get("logprobs") or {}).get("content")
    if not content:
        return None
    return [
        TokenLogprob(
            token=str(item.get("token", "")),
            logprob=float(item.get("logprob", 0.0)),
            top=[
                (str(alt["token"]), float(alt["logprob"])) for alt in item.get("top_logprobs") or []
            ],
        )
        for item in content
    ]
