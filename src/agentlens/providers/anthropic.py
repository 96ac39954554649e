"""Anthropic backend via the official SDK (extra `anthropic`). Chat only: the API exposes no
log-probs, so `option_logprobs` raises `CapabilityError` naming backends that have them.

OpenAI-style messages and tools are translated here; a `json_schema` request is served by a
forced tool call whose input is the JSON answer. SDK retries are off: `retry.py` owns them.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections.abc import Sequence
from typing import Any

from agentlens import redaction
from agentlens.errors import CapabilityError, ConfigError, MissingDependencyError, ProviderError
from agentlens.providers.retry import RetryableError, parse_retry_after
from agentlens.providers.types import (
    ChatRequest,
    ChatResponse,
    Message,
    OptionLogprobs,
    TokenUsage,
)

DEFAULT_MAX_TOKENS = 4096
SCHEMA_TOOL = "answer"


class AnthropicProvider:
    supports_logprobs = False
    supports_json_schema = True  # served by a forced tool call

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout_s: float = 120.0,
    ) -> None:
        self.name = f"anthropic:{model}"
        self.model = model
        self._api_key = api_key
        self._base_url = base_url
        self._timeout_s = timeout_s
        self._client: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"AnthropicProvider({self.name!r})"

    async def chat(self, request: ChatRequest) -> ChatResponse:
        sdk = _import_sdk()
        started = time.perf_counter()
        create = self._sdk_client(sdk).messages.create
        try:
            message = await create(**supported_kwargs(create, self._body(request)))
        except (sdk.RateLimitError, sdk.InternalServerError) as exc:
            retry_after = parse_retry_after(exc.response.headers.get("retry-after"))
            raise RetryableError(f"HTTP {exc.status_code}", retry_after=retry_after) from exc
        except (sdk.APITimeoutError, sdk.APIConnectionError) as exc:
            raise RetryableError(type(exc).__name__) from exc
        except sdk.APIStatusError as exc:
            if exc.status_code >= 500:
                raise RetryableError(f"HTTP {exc.status_code}") from exc
            said = redaction.masked(exc.message)
            raise ProviderError(self.name, f"HTTP {exc.status_code}: {said}") from exc
        return self._response(message, request, time.perf_counter() - started)

    async def option_logprobs(
        self,
        messages: list[Message],
        labels: Sequence[str],
        *,
        floor: float = -20.0,
        top_k: int = 20,
    ) -> OptionLogprobs:
        raise CapabilityError(
            self.name,
            "the Anthropic API returns no log-probs; use an openai-compatible model "
            "(e.g. openai:gpt-4.1 or a local server) or llamacpp:/path/model.gguf for this role",
        )

    def _sdk_client(self, sdk: Any) -> Any:
        # The SDK's httpx pool belongs to one event loop; sync helpers run a fresh loop per call.
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            if not self._api_key and not self._base_url:
                raise ConfigError(f"{self.name}: set ANTHROPIC_API_KEY (or llm.backends.anthropic)")
            self._client = sdk.AsyncAnthropic(
                api_key=self._api_key or "unused",
                base_url=self._base_url,
                max_retries=0,
                timeout=self._timeout_s,
            )
            self._client_loop = loop
        return self._client

    def _body(self, request: ChatRequest) -> dict[str, Any]:
        system, messages = to_anthropic_messages(request.messages)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
        }
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if system:
            body["system"] = system
        if request.stop:
            body["stop_sequences"] = request.stop
        tools = [to_anthropic_tool(t) for t in request.tools or []]
        if request.json_schema is not None:
            tools.append({"name": SCHEMA_TOOL, "input_schema": request.json_schema})
            body["tool_choice"] = {"type": "tool", "name": SCHEMA_TOOL}
        if tools:
            body["tools"] = tools
        return body

    def _response(self, message: Any, request: ChatRequest, latency: float) -> ChatResponse:
        texts, calls = [], []
        for block in message.content:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                calls.append(_tool_call(block))
        if request.json_schema is not None:
            answer = [c for c in calls if c["function"]["name"] == SCHEMA_TOOL]
            texts = [answer[0]["function"]["arguments"]] if answer else texts
            calls = [c for c in calls if c["function"]["name"] != SCHEMA_TOOL]
        return ChatResponse(
            text="".join(texts),
            tool_calls=calls,
            usage=_usage(message.usage),
            latency_s=latency,
            model=str(message.model),
        )


def supported_kwargs(create: Any, body: dict[str, Any]) -> dict[str, Any]:
    """Drop what this SDK version's `messages.create` no longer takes (newer SDKs have no
    `temperature`): the SDK tracks what the API accepts."""
    params = inspect.signature(create).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return body
    return {key: value for key, value in body.items() if key in params}


def to_anthropic_messages(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
    """Split out system text; map tool results and assistant tool calls to content blocks."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for msg in messages:
        role = msg.get("role")
        if role == "system":
            system.append(str(msg.get("content") or ""))
        elif role == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": msg.get("tool_call_id", ""),
                "content": str(msg.get("content") or ""),
            }
            out.append({"role": "user", "content": [block]})
        elif role == "assistant" and msg.get("tool_calls"):
            blocks: list[dict[str, Any]] = []
            if msg.get("content"):
                blocks.append({"type": "text", "text": str(msg["content"])})
            blocks += [_tool_use_block(call) for call in msg["tool_calls"]]
            out.append({"role": "assistant", "content": blocks})
        else:
            out.append({"role": role, "content": msg.get("content") or ""})
    return "\n\n".join(system), out


def to_anthropic_tool(tool: dict[str, Any]) -> dict[str, Any]:
    fn = tool.get("function", tool)
    return {
        "name": fn["name"],
        "description": fn.get("description", ""),
        "input_schema": fn.get("parameters") or {"type": "object", "properties": {}},
    }


def _tool_use_block(call: dict[str, Any]) -> dict[str, Any]:
    fn = call.get("function", {})
    args = fn.get("arguments") or "{}"
    return {
        "type": "tool_use",
        "id": call.get("id", ""),
        "name": fn.get("name", ""),
        "input": json.loads(args) if isinstance(args, str) else args,
    }


def _tool_call(block: Any) -> dict[str, Any]:
    return {
        "id": block.id,
        "type": "function",
        "function": {"name": block.name, "arguments": json.dumps(block.input)},
    }


def _usage(usage: Any) -> TokenUsage:
    read = getattr(usage, "cache_read_input_tokens", None) or 0
    written = getattr(usage, "cache_creation_input_tokens", None) or 0
    return TokenUsage(
        prompt_tokens=int(usage.input_tokens) + read + written,
        completion_tokens=int(usage.output_tokens),
        cached_tokens=read,
    )


def _import_sdk() -> Any:
    try:
        import anthropic
    except ImportError as exc:
        raise MissingDependencyError("The Anthropic backend", "anthropic", "anthropic") from exc
    return anthropic
