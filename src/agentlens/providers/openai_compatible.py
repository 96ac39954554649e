"""OpenAI-compatible HTTP backend (OpenAI, DeepSeek, OpenRouter, vLLM, llama.cpp server, Ollama)
over httpx: chat, raw completions, and option log-probs from `top_logprobs`.

Errors are sorted for `retry.call_with_retry`: 429 / 5xx / timeouts / broken connections /
malformed bodies are `RetryableError`; other 4xx are a final `ProviderError`. The API key goes
only into the Authorization header; it is never part of `name`, an error message or a result.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import httpx
import orjson

from agentlens.errors import ConfigError, ProviderError
from agentlens.providers.retry import RetryableError, parse_retry_after
from agentlens.providers.types import (
    ChatRequest,
    ChatResponse,
    Message,
    OptionLogprob,
    OptionLogprobs,
    TokenUsage,
    logsumexp,
    match_label_logprobs,
)


class OpenAICompatibleProvider:
    supports_logprobs = True

    def __init__(
        self,
        name: str,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        key_env: str | None = None,
        key_required: bool = False,
        timeout_s: float = 120.0,
    ) -> None:
        self.name = name
        self.key_env = key_env
        self._missing_key = key_required and not api_key
        self.base_url = base_url.rstrip("/")
        self.model = model
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout = httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0))
        self._client: httpx.AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._json_object = False  # schema style: OpenAI "json_schema" until a server refuses it

    def __repr__(self) -> str:
        return f"OpenAICompatibleProvider({self.name!r})"

    async def chat(self, request: ChatRequest) -> ChatResponse:
        started = time.perf_counter()
        try:
            data = await self._post("/chat/completions", self._chat_body(request))
        except ProviderError as exc:
            # llama.cpp's server (and some others) only know {"type": "json_object", "schema"}.
            if request.json_schema is None or self._json_object or exc.status == 401:
                raise
            self._json_object = True
            data = await self._post("/chat/completions", self._chat_body(request))
        choice = _first_choice(self.name, data)
        message = choice.get("message") or {}
        return ChatResponse(
            text=message.get("content") or "",
            tool_calls=list(message.get("tool_calls") or []),
            usage=parse_usage(data.get("usage")),
            latency_s=time.perf_counter() - started,
            model=str(data.get("model") or self.model),
        )

    async def complete(
        self, prompt: str, *, max_tokens: int = 16, temperature: float = 0.0, **extra: Any
    ) -> ChatResponse:
        """Raw text completion (`/completions`), for prompts already in the model's template."""
        body = {"model": self.model, "prompt": prompt, "max_tokens": max_tokens}
        body |= {"temperature": temperature, **extra}
        started = time.perf_counter()
        data = await self._post("/completions", body)
        choice = _first_choice(self.name, data)
        return ChatResponse(
            text=choice.get("text") or "",
            usage=parse_usage(data.get("usage")),
            latency_s=time.perf_counter() - started,
            model=str(data.get("model") or self.model),
        )

    async def prompt_option_logprobs(
        self, prompt: str, labels: Sequence[str], *, floor: float = -20.0, top_k: int = 20
    ) -> OptionLogprobs:
        """Option log-probs after a raw prompt, via `/completions` (legacy `logprobs=k`)."""
        body = {"model": self.model, "prompt": prompt, "max_tokens": 1, "temperature": 0.0}
        started = time.perf_counter()
        data = await self._post("/completions", body | {"logprobs": top_k})
        logprobs = _first_choice(self.name, data).get("logprobs") or {}
        tops = logprobs.get("top_logprobs") or [None]
        if not tops[0]:
            raise ProviderError(self.name, "server returned no log-probs for /completions")
        candidates = [(token, float(value)) for token, value in tops[0].items()]
        return OptionLogprobs(
            options=options_from_top_k(candidates, labels, floor),
            floor=floor,
            top_k=top_k,
            usage=parse_usage(data.get("usage")),
            latency_s=time.perf_counter() - started,
            model=str(data.get("model") or self.model),
        )

    async def option_logprobs(
        self,
        messages: list[Message],
        labels: Sequence[str],
        *,
        floor: float = -20.0,
        top_k: int = 20,
    ) -> OptionLogprobs:
        body = self._chat_body(ChatRequest(messages=messages, temperature=0.0, max_tokens=1))
        body |= {"logprobs": True, "top_logprobs": top_k}
        started = time.perf_counter()
        data = await self._post("/chat/completions", body)
        candidates = first_token_candidates(self.name, _first_choice(self.name, data))
        return OptionLogprobs(
            options=options_from_top_k(candidates, labels, floor),
            floor=floor,
            top_k=top_k,
            usage=parse_usage(data.get("usage")),
            latency_s=time.perf_counter() - started,
            model=str(data.get("model") or self.model),
        )

    async def aclose(self) -> None:
        if self._client is not None and self._client_loop is asyncio.get_running_loop():
            await self._client.aclose()
        self._client = None

    def _chat_body(self, request: ChatRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": request.messages,
            "temperature": request.temperature,
        }
        optional = {
            "max_tokens": request.max_tokens,
            "stop": request.stop,
            "tools": request.tools,
            "seed": request.seed,
        }
        body |= {k: v for k, v in optional.items() if v is not None}
        if request.json_schema is not None and self._json_object:
            body["response_format"] = {"type": "json_object", "schema": request.json_schema}
        elif request.json_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": request.json_schema, "strict": True},
            }
        return body

    async def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        if self._missing_key:
            raise ConfigError(f"{self.name}: no API key; set {self.key_env}")
        try:
            response = await self._http().post(path, content=orjson.dumps(body))
        except httpx.TimeoutException as exc:
            raise RetryableError(f"timeout ({type(exc).__name__})") from exc
        except httpx.TransportError as exc:
            raise RetryableError(f"connection failed ({type(exc).__name__})") from exc
        raise_for_status(self.name, response, self.key_env)
        try:
            data = orjson.loads(response.content)
        except orjson.JSONDecodeError as exc:
            raise RetryableError(f"malformed JSON from server ({exc})") from exc
        if not isinstance(data, dict):
            raise RetryableError("malformed response: not a JSON object")
        return data

    def _http(self) -> httpx.AsyncClient:
        # httpx pools belong to one event loop; sync helpers run a fresh loop per call.
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client = httpx.AsyncClient(
                base_url=self.base_url,
                headers={**self._headers, "Content-Type": "application/json"},
                timeout=self._timeout,
            )
            self._client_loop = loop
        return self._client


def raise_for_status(name: str, response: httpx.Response, key_env: str | None = None) -> None:
    status = response.status_code
    if status < 400:
        return
    # llama.cpp's server answers 500 to a request it cannot validate: that is not transient.
    if status == 429 or (status >= 500 and b"response_format" not in response.content):
        retry_after = parse_retry_after(response.headers.get("retry-after"))
        raise RetryableError(f"HTTP {status}", retry_after=retry_after)
    hint = f" (check {key_env or 'the API key'})" if status in (401, 403) else ""
    raise ProviderError(name, f"HTTP {status}{hint}: {_error_text(response)}", status=status)


def _error_text(response: httpx.Response) -> str:
    try:
        error = orjson.loads(response.content).get("error")
        message = error.get("message") if isinstance(error, dict) else error
    except (orjson.JSONDecodeError, AttributeError):
        message = response.text
    return str(message)[:300]


def _first_choice(name: str, data: dict[str, Any]) -> dict[str, Any]:
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
            options[label] = OptionLogprob(label=label, logprob=logsumexp(values), source="top_k")
        else:
            options[label] = OptionLogprob(label=label, logprob=floor, source="floor")
    return options
