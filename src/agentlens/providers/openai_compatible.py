"""OpenAI-compatible HTTP backend (OpenAI, DeepSeek, OpenRouter, vLLM, llama.cpp server, Ollama)
over httpx: chat, raw completions, and option log-probs from `top_logprobs`.

Errors are sorted for `retry.call_with_retry`: 429 / 5xx / timeouts / broken connections /
malformed bodies are `RetryableError`; other 4xx are a final `ProviderError`. The API key goes
only into the Authorization header; it is never part of `name`, an error message or a result.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Sequence
from typing import Any

import httpx
import orjson

from agentlens.errors import ConfigError, ProviderError
from agentlens.providers.openai_wire import (
    first_choice,
    first_token_candidates,
    options_from_top_k,
    parse_usage,
    raise_for_status,
    token_logprobs,
)
from agentlens.providers.retry import RetryableError
from agentlens.providers.types import ChatRequest, ChatResponse, Message, OptionLogprobs

# OpenAI's reasoning models (o1, o3, o4-mini, gpt-5.x) refuse any temperature but their default
# and refuse `max_tokens` (they take `max_completion_tokens`): a judge run at temperature 0 would
# get a 400 on every call. Matched on the model's own name, also behind a router (`openai/gpt-5`).
REASONING_MODEL = re.compile(r"(?:^|/)(?:o[1-9](?:-|$)|gpt-5)")


def is_reasoning_model(model: str) -> bool:
    return bool(REASONING_MODEL.search(model))


UNSTRICT = frozenset({"maxLength", "minLength"})


def strict_subset(schema: Any) -> Any:
    """The schema without the string-length bounds OpenAI's strict mode refuses (a grammar
    server, asked with `json_object` + schema after refusing this style, gets them all)."""
    if isinstance(schema, dict):
        return {k: strict_subset(v) for k, v in schema.items() if k not in UNSTRICT}
    if isinstance(schema, list):
        return [strict_subset(v) for v in schema]
    return schema


class OpenAICompatibleProvider:
    supports_logprobs = True
    supports_json_schema = True

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
        choice = first_choice(self.name, data)
        message = choice.get("message") or {}
        return ChatResponse(
            text=message.get("content") or "",
            tool_calls=list(message.get("tool_calls") or []),
            usage=parse_usage(data.get("usage")),
            latency_s=time.perf_counter() - started,
            model=str(data.get("model") or self.model),
            logprobs=token_logprobs(choice) if request.top_logprobs else None,
        )

    async def complete(
        self, prompt: str, *, max_tokens: int = 16, temperature: float = 0.0, **extra: Any
    ) -> ChatResponse:
        """Raw text completion (`/completions`), for prompts already in the model's template."""
        body = {"model": self.model, "prompt": prompt, "max_tokens": max_tokens}
        body |= {"temperature": temperature, **extra}
        started = time.perf_counter()
        data = await self._post("/completions", body)
        choice = first_choice(self.name, data)
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
        logprobs = first_choice(self.name, data).get("logprobs") or {}
        tops = logprobs.get("top_logprobs") or [None]
        if not tops[0]:
            raise ProviderError(self.name, "server returned no log-probs for /completions")
        candidates = [(token, float(value)) for token, value in tops[0].items()]
        return self._option_result(data, candidates, labels, floor, top_k, started)

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
        candidates = first_token_candidates(self.name, first_choice(self.name, data))
        return self._option_result(data, candidates, labels, floor, top_k, started)

    def _option_result(
        self,
        data: dict[str, Any],
        candidates: list[tuple[str, float]],
        labels: Sequence[str],
        floor: float,
        top_k: int,
        started: float,
    ) -> OptionLogprobs:
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
        body: dict[str, Any] = {"model": self.model, "messages": request.messages}
        reasoning = is_reasoning_model(self.model)
        optional = {
            "temperature": None if reasoning else request.temperature,
            "max_completion_tokens" if reasoning else "max_tokens": request.max_tokens,
            "stop": request.stop,
            "tools": request.tools,
            "seed": request.seed,
        }
        body |= {k: v for k, v in optional.items() if v is not None}
        if request.top_logprobs and not reasoning:  # reasoning models refuse log-probs
            body |= {"logprobs": True, "top_logprobs": request.top_logprobs}
        if request.json_schema is not None and self._json_object:
            body["response_format"] = {"type": "json_object", "schema": request.json_schema}
        elif request.json_schema is not None:
            schema = strict_subset(request.json_schema)
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": schema, "strict": True},
            }
        return body

    def check_ready(self) -> None:
        """Refuse now what the first call would: a key the environment does not hold."""
        if self._missing_key:
            raise ConfigError(f"{self.name}: no API key; set {self.key_env}")

    async def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.check_ready()
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
