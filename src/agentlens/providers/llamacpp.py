"""In-process llama.cpp backend (`llama-cpp-python`, extra `local-llm`).

Option log-probs are exact: the log-softmax of the full next-token distribution, summed over
every vocabulary token that spells the label once stripped ("A", " A", ...). No top-k, no floor.
The prompt tokens are captured from the model's own chat handler, so they are exactly what the
llama.cpp server would build for the same messages.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agentlens.errors import ConfigError, MissingDependencyError, ProviderError
from agentlens.providers.openai_wire import parse_usage
from agentlens.providers.types import (
    ChatRequest,
    ChatResponse,
    Message,
    OptionLogprob,
    OptionLogprobs,
    TokenUsage,
)

AMX_REBUILD = (
    # the flags of `make install`, the build tested on the host that crashed
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" '
    "pip install --force-reinstall --no-deps --no-cache-dir llama-cpp-python=="
)


def amx_warning(system_info: str, version: str) -> str | None:
    """The warning for a llama.cpp built with AMX kernels, which segfault on the first decode on
    some Intel hosts (ggml-org/llama.cpp#20824): a crash no Python code can catch or explain."""
    if "AMX_INT8 = 1" not in system_info:
        return None
    return (
        "warning: llama.cpp was built with AMX kernels, which crash some Intel hosts "
        "(llama.cpp#20824); if this run dies with a segmentation fault, rebuild it: "
        + AMX_REBUILD
        + version
    )


class _PromptCaptured(Exception):
    def __init__(self, tokens: list[int]) -> None:
        self.tokens = tokens


class _CapturingLlama:
    """Stands in for `Llama` inside a chat handler and stops at `create_completion`."""

    def __init__(self, llama: Any) -> None:
        self._llama = llama

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llama, name)

    def create_completion(self, prompt: list[int], **_: Any) -> Any:
        raise _PromptCaptured(list(prompt))


class LlamaCppProvider:
    supports_logprobs = True

    def __init__(self, model_path: str, *, n_ctx: int = 4096, n_threads: int = 2) -> None:
        self.name = f"llamacpp:{model_path}"
        self.model_path = model_path
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self._llama: Any = None
        self._lock = threading.Lock()  # one llama.cpp context: one call at a time
        self._label_ids: dict[str, list[int]] = {}

    def __repr__(self) -> str:
        return f"LlamaCppProvider({self.name!r})"

    async def chat(self, request: ChatRequest) -> ChatResponse:
        return await asyncio.to_thread(self._chat, request)

    async def option_logprobs(
        self,
        messages: list[Message],
        labels: Sequence[str],
        *,
        floor: float = -20.0,
        top_k: int = 20,
    ) -> OptionLogprobs:
        return await asyncio.to_thread(self._option_logprobs, messages, list(labels), floor)

    def _chat(self, request: ChatRequest) -> ChatResponse:
        kwargs: dict[str, Any] = {
            "messages": request.messages,
            "max_tokens": request.max_tokens,
            "stop": request.stop,
            "seed": request.seed,
            "tools": request.tools,
        }
        if request.temperature is not None:  # None: llama.cpp's own default
            kwargs["temperature"] = request.temperature
        if request.json_schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": request.json_schema}
        started = time.perf_counter()
        with self._lock:
            self._check_fits(len(self._prompt_tokens(request.messages)))
            data = self._model().create_chat_completion(**kwargs)
        message = data["choices"][0]["message"]
        return ChatResponse(
            text=message.get("content") or "",
            tool_calls=list(message.get("tool_calls") or []),
            usage=parse_usage(data.get("usage")),
            latency_s=time.perf_counter() - started,
            model=self.model_path,
        )

    def _option_logprobs(
        self, messages: list[Message], labels: list[str], floor: float
    ) -> OptionLogprobs:
        started = time.perf_counter()
        with self._lock:
            tokens = self._prompt_tokens(messages)
            self._check_fits(len(tokens))
            logprobs = self._next_token_logprobs(tokens)
            ids = self._label_token_ids(labels)
        options = {}
        for label in labels:
            if ids[label]:
                value = float(np.logaddexp.reduce(logprobs[ids[label]]))
                options[label] = OptionLogprob(label=label, logprob=value, source="exact")
            else:  # no vocabulary token spells this label: it can never be the next token
                options[label] = OptionLogprob(label=label, logprob=floor, source="floor")
        return OptionLogprobs(
            options=options,
            floor=floor,
            top_k=None,
            usage=TokenUsage(prompt_tokens=len(tokens)),
            latency_s=time.perf_counter() - started,
            model=self.model_path,
        )

    def _prompt_tokens(self, messages: list[Message]) -> list[int]:
        llama = self._model()
        handler = (
            llama.chat_handler
            or llama._chat_handlers.get(llama.chat_format)
            or self._sdk().llama_chat_format.get_chat_completion_handler(llama.chat_format)
        )
        try:
            handler(llama=_CapturingLlama(llama), messages=messages, max_tokens=1)
        except _PromptCaptured as captured:
            return captured.tokens
        raise ProviderError(self.name, "chat handler did not build a prompt")

    def _check_fits(self, prompt_tokens: int) -> None:
        """A prompt that does not fit the context is the caller's to shorten: a ProviderError
        naming both sizes (llama.cpp itself raises a bare ValueError, or overruns on `eval`)."""
        if prompt_tokens >= self.n_ctx:
            raise ProviderError(
                self.name,
                f"the prompt is {prompt_tokens} tokens, the model's context {self.n_ctx}: "
                "shorten it (e.g. `review --budget-tokens 2000` for a 4k context)",
            )

    def _next_token_logprobs(self, tokens: list[int]) -> np.ndarray:
        """Evaluate the prompt (reusing the cached common prefix) and log-softmax the logits."""
        llama = self._model()
        reuse = _common_prefix(list(llama._input_ids), tokens)
        reuse = min(reuse, len(tokens) - 1)  # always decode at least the last token
        llama.n_tokens = reuse
        llama.eval(tokens[reuse:])
        n_vocab = llama.n_vocab()
        logits = np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(n_vocab,))
        logits = logits.astype(np.float64)
        top = logits.max()
        return logits - top - np.log(np.exp(logits - top).sum())

    def _label_token_ids(self, labels: list[str]) -> dict[str, list[int]]:
        missing = [label for label in labels if label not in self._label_ids]
        if missing:
            llama = self._model()
            found: dict[str, list[int]] = {label: [] for label in missing}
            for token_id in range(llama.n_vocab()):
                text = llama.detokenize([token_id]).decode("utf-8", errors="ignore").strip()
                if text in found:
                    found[text].append(token_id)
            self._label_ids.update(found)
        return {label: self._label_ids[label] for label in labels}

    def _model(self) -> Any:
        if self._llama is None:
            if not Path(self.model_path).is_file():
                raise ConfigError(f"{self.model_path}: GGUF model file not found ({self.name})")
            sdk = self._sdk()
            info = sdk.llama_print_system_info().decode(errors="replace")
            warning = amx_warning(info, sdk.__version__)
            if warning is not None:  # printed before the first decode, the call that crashes
                print(warning, file=sys.stderr, flush=True)
            self._llama = sdk.Llama(
                model_path=self.model_path,
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                logits_all=False,
                verbose=False,
            )
        return self._llama

    @staticmethod
    def _sdk() -> Any:
        try:
            import llama_cpp
            import llama_cpp.llama_chat_format
        except ImportError as exc:
            raise MissingDependencyError(
                "The in-process llama.cpp backend", "local-llm", "llama_cpp"
            ) from exc
        return llama_cpp


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
