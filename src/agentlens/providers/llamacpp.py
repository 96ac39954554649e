"""In-process llama.cpp backend (`llama-cpp-python`, extra `local-llm`).

Option log-probs are exact: the log-softmax of the full next-token distribution, summed over
every vocabulary token that spells the label once stripped ("A", " A", ...). No top-k, no floor.
The prompt tokens are captured from the model's own chat handler, so they are exactly what the
llama.cpp server would build for the same messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
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
    TokenLogprob,
    TokenUsage,
)

# llama.cpp's own rule (half the cores): its threads meet at a barrier every token, so more
# threads than free cores, on a busy machine, make generation ~10x slower, not faster
DEFAULT_THREADS = max(1, min(8, (os.cpu_count() or 2) // 2))

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
    supports_json_schema = True  # a GBNF grammar compiled from the schema
    max_parallel = 1
    """One llama.cpp context generates one answer at a time: the client queues calls before
    their timeout starts, so a call waiting its turn is never timed out and retried."""

    def __init__(
        self, model_path: str, *, n_ctx: int | None = None, n_threads: int | None = None
    ) -> None:
        self.name = f"llamacpp:{model_path}"
        self.model_path = model_path
        self.n_ctx = n_ctx or 0  # 0 until loaded: the model's own trained context
        self.n_threads = n_threads or DEFAULT_THREADS
        self._requested_ctx = n_ctx
        self._llama: Any = None
        self._lock = threading.Lock()  # one llama.cpp context: one call at a time
        self._label_ids: dict[str, list[int]] = {}

    def __repr__(self) -> str:
        return f"LlamaCppProvider({self.name!r})"

    @property
    def cache_name(self) -> str:
        """The model as the response cache and the run ledger key its calls: by its file's
        content, not its path, so a copy elsewhere (the wheel in a new virtual environment)
        reuses the answers, and a file replaced in place does not. Its name while the file is
        missing (the call then fails, uncached)."""
        digest = model_digest(self.model_path)
        return f"llamacpp:sha256:{digest}" if digest else self.name

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Generate in a worker thread; when the caller gives up (timeout, cancel), the thread is
        told to stop at its next token instead of finishing an answer nobody reads."""
        cancel = threading.Event()
        work = asyncio.get_running_loop().run_in_executor(None, self._chat, request, cancel)
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            cancel.set()
            with contextlib.suppress(Exception):
                await work  # the context is free again only once generation has stopped
            raise

    async def option_logprobs(
        self,
        messages: list[Message],
        labels: Sequence[str],
        *,
        floor: float = -20.0,
        top_k: int = 20,
    ) -> OptionLogprobs:
        return await asyncio.to_thread(self._option_logprobs, messages, list(labels), floor)

    def _chat(self, request: ChatRequest, cancel: threading.Event | None = None) -> ChatResponse:
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
        recorder = _TopLogprobs(request.top_logprobs) if request.top_logprobs else None
        started = time.perf_counter()
        with self._lock:
            if cancel is not None and cancel.is_set():
                raise ProviderError(self.name, "cancelled before it started")
            llama = self._model()
            self._check_fits(len(self._prompt_tokens(request.messages)))
            guarded = _GuardedLlama(llama, cancel or threading.Event(), recorder)
            data = self._handler()(llama=guarded, **kwargs)
            logprobs = recorder.tokens(llama) if recorder else None
        message = data["choices"][0]["message"]
        return ChatResponse(
            text=message.get("content") or "",
            tool_calls=list(message.get("tool_calls") or []),
            usage=parse_usage(data.get("usage")),
            latency_s=time.perf_counter() - started,
            model=self.model_path,
            logprobs=logprobs,
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

    def _handler(self) -> Any:
        """The chat handler `Llama.create_chat_completion` would use for this model."""
        llama = self._model()
        return (
            llama.chat_handler
            or llama._chat_handlers.get(llama.chat_format)
            or self._sdk().llama_chat_format.get_chat_completion_handler(llama.chat_format)
        )

    def _prompt_tokens(self, messages: list[Message]) -> list[int]:
        llama = self._model()
        try:
            self._handler()(llama=_CapturingLlama(llama), messages=messages, max_tokens=1)
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
                "shorten it (e.g. `review --budget-tokens 2000` for a 4k context) or raise "
                "llm.backends.llamacpp.n_ctx",
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

    def check_ready(self) -> None:
        """Refuse now what loading the model would: a GGUF file that is not there."""
        if not Path(self.model_path).is_file():
            raise ConfigError(f"{self.model_path}: GGUF model file not found ({self.name})")

    def _model(self) -> Any:
        if self._llama is None:
            self.check_ready()
            sdk = self._sdk()
            info = sdk.llama_print_system_info().decode(errors="replace")
            warning = amx_warning(info, sdk.__version__)
            if warning is not None:  # printed before the first decode, the call that crashes
                print(warning, file=sys.stderr, flush=True)
            self._llama = sdk.Llama(
                model_path=self.model_path,
                n_ctx=self._requested_ctx or 0,  # 0: the context length in the GGUF metadata
                n_threads=self.n_threads,
                logits_all=False,
                verbose=False,
            )
            self.n_ctx = int(self._llama.n_ctx())
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


class _GuardedLlama:
    """Stands in for `Llama` inside a chat handler: its completion stops once `cancel` is set
    and, when asked, records each position's top log-probs (before any grammar masks them)."""

    def __init__(self, llama: Any, cancel: threading.Event, recorder: _TopLogprobs | None) -> None:
        self._llama = llama
        self._cancel = cancel
        self._recorder = recorder

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llama, name)

    def create_completion(self, **kwargs: Any) -> Any:
        from llama_cpp import LogitsProcessorList, StoppingCriteriaList

        stops = list(kwargs.get("stopping_criteria") or [])
        kwargs["stopping_criteria"] = StoppingCriteriaList([*stops, self._cancelled])
        if self._recorder is not None:
            processors = list(kwargs.get("logits_processor") or [])
            kwargs["logits_processor"] = LogitsProcessorList([self._recorder, *processors])
        return self._llama.create_completion(**kwargs)

    def _cancelled(self, _tokens: Any, _logits: Any) -> bool:
        return self._cancel.is_set()


class _TopLogprobs:
    """A logits processor that keeps the `k` most likely tokens of each generated position
    (log-softmax of the raw logits, before a grammar masks them) and the sampled token's own
    log-prob, read at the next position: no `logits_all` score matrix is needed."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.top: list[tuple[np.ndarray, np.ndarray]] = []
        self.chosen: list[tuple[int, float]] = []
        self._previous: np.ndarray | None = None

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self._previous is not None:
            token = int(input_ids[-1])
            self.chosen.append((token, float(self._previous[token])))
        logits = np.asarray(scores, dtype=np.float64)
        top = logits.max()
        logprobs = logits - top - np.log(np.exp(logits - top).sum())
        ids = np.argpartition(-logprobs, self.k)[: self.k]
        ids = ids[np.argsort(-logprobs[ids])]
        self.top.append((ids, logprobs[ids]))
        self._previous = logprobs
        return scores

    def tokens(self, llama: Any) -> list[TokenLogprob]:
        """One entry per generated token whose successor was generated too (the last one's
        identity is never fed back, and a closing brace carries no score)."""
        return [
            TokenLogprob(
                token=_text(llama, token),
                logprob=logprob,
                top=[(_text(llama, int(i)), float(v)) for i, v in zip(ids, lps, strict=True)],
            )
            for (token, logprob), (ids, lps) in zip(self.chosen, self.top, strict=False)
        ]


def _text(llama: Any, token: int) -> str:
    return str(llama.detokenize([token]).decode("utf-8", errors="ignore"))


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


_DIGESTS: dict[tuple[str, int, int], str] = {}


def model_digest(path: str) -> str | None:
    """The SHA-256 of a model file (once per process while its size and time stay), or None
    when it cannot be read."""
    try:
        info = os.stat(path)
        key = (os.path.realpath(path), info.st_size, info.st_mtime_ns)
        if key not in _DIGESTS:
            with open(path, "rb") as fh:
                _DIGESTS[key] = hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError:
        return None
    return _DIGESTS[key]
