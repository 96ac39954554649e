"""The real local model (SmolLM2-135M on llama.cpp): over HTTP and in-process, same code."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import httpx
import pytest

from agentlens.providers import ChatRequest, LLMClient, OptionLogprobs, get_provider, make_backend
from agentlens.providers.openai_compatible import OpenAICompatibleProvider

pytestmark = pytest.mark.llm

LABELS = ["A", "B", "C", "D"]
QUESTION = [
    {"role": "system", "content": "Answer with a single letter."},
    {"role": "user", "content": "Which is a fruit? A) car B) apple C) stone D) chair. Answer:"},
]


def evaluate(client: LLMClient) -> tuple[OptionLogprobs, str]:
    """A tiny evaluation: score the options, then ask for a short greedy answer."""
    scores = client.option_logprobs_sync(QUESTION, LABELS)
    answer = client.chat_sync(ChatRequest(messages=QUESTION, max_tokens=6))
    return scores, answer.text


@pytest.fixture(scope="module")
def over_http(local_llm_url: str) -> tuple[OptionLogprobs, str]:
    return evaluate(get_provider(local_llm_url, cache=False))


@pytest.fixture(scope="module")
def in_process(local_gguf_path: Path) -> tuple[OptionLogprobs, str]:
    return evaluate(get_provider(f"llamacpp:{local_gguf_path}", cache=False))


def test_http_log_probs_are_read_from_the_server_top_list(
    local_llm_url: str, over_http: tuple[OptionLogprobs, str]
) -> None:
    base = local_llm_url.split(":", 1)[1].split("#")[0]
    raw = httpx.post(
        f"{base}/chat/completions",
        json={
            "model": "smollm2-135m",
            "messages": QUESTION,
            "max_tokens": 1,
            "logprobs": True,
            "top_logprobs": 20,
        },
        timeout=120,
    ).json()
    top = raw["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
    for label in LABELS:
        variants = [t["logprob"] for t in top if t["token"].strip() == label]
        option = over_http[0].options[label]
        if variants:
            expected = math.log(sum(math.exp(v) for v in variants))
            assert option.logprob == pytest.approx(expected, abs=1e-6)
            assert option.source == "top_k"
        else:
            assert (option.logprob, option.source) == (-20.0, "floor")


def test_http_and_in_process_agree(
    over_http: tuple[OptionLogprobs, str], in_process: tuple[OptionLogprobs, str]
) -> None:
    http_scores, http_text = over_http
    local_scores, local_text = in_process
    assert {o.source for o in local_scores.options.values()} == {"exact"}
    lowest_listed = min(o.logprob for o in http_scores.options.values() if o.source == "top_k")
    for label in LABELS:
        http_option, exact = http_scores.options[label], local_scores.options[label].logprob
        if http_option.source == "top_k":
            assert exact == pytest.approx(http_option.logprob, abs=0.02)  # same GGUF, fp noise
        else:  # absent from the server's top-20: the exact value must rank below it
            assert exact <= lowest_listed
    assert max(LABELS, key=local_scores.logprobs.__getitem__) == max(
        LABELS, key=http_scores.logprobs.__getitem__
    )
    assert sum(local_scores.probabilities().values()) == pytest.approx(1.0)
    assert http_text == local_text and http_text  # greedy decoding of the same weights


def test_json_schema_constrains_the_output(local_llm_url: str) -> None:
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "string", "enum": LABELS}},
        "required": ["answer"],
    }
    client = get_provider(local_llm_url, cache=False)
    reply = client.chat_sync(ChatRequest(messages=QUESTION, json_schema=schema, max_tokens=20))
    assert json.loads(reply.text)["answer"] in LABELS


def test_a_repeated_evaluation_is_served_from_the_cache(local_llm_url: str) -> None:
    first = get_provider(local_llm_url)
    request = ChatRequest(messages=[{"role": "user", "content": "Say hi."}], max_tokens=3)
    answer = first.chat_sync(request)
    second = get_provider(local_llm_url)
    again = second.chat_sync(request)
    assert (first.stats.calls, second.stats.calls, second.stats.cache_hits) == (1, 0, 1)
    assert again.from_cache and again.text == answer.text
    assert answer.usage.prompt_tokens > 0 and answer.cost == 0.0


def test_raw_completions_give_option_log_probs(
    local_llm_url: str,
) -> None:
    backend = make_backend(local_llm_url)
    assert isinstance(backend, OpenAICompatibleProvider)
    prompt = "Q: Which is a fruit? A) car B) apple C) stone D) chair\nAnswer (A, B, C or D):"
    scores = asyncio.run(backend.prompt_option_logprobs(prompt, LABELS))
    listed = [o for o in scores.options.values() if o.source == "top_k"]
    assert listed, scores
    assert all(-20.0 < o.logprob < 0.0 for o in listed)
    assert scores.usage.prompt_tokens > 0


def test_a_prompt_longer_than_the_context_is_a_provider_error(local_gguf_path: Path) -> None:
    """llama.cpp raises a bare ValueError for chat and overruns on eval; both become one line."""
    from agentlens.errors import ProviderError
    from agentlens.providers.llamacpp import LlamaCppProvider

    provider = LlamaCppProvider(str(local_gguf_path), n_ctx=256)
    long = [{"role": "user", "content": "word " * 400}]
    with pytest.raises(ProviderError, match=r"the prompt is \d+ tokens, the model's context 256"):
        asyncio.run(provider.chat(ChatRequest(messages=long, max_tokens=4)))
    with pytest.raises(ProviderError, match="model's context 256"):
        asyncio.run(provider.option_logprobs(long, LABELS))
    scores = asyncio.run(provider.option_logprobs(QUESTION, LABELS))  # a short one still works
    assert set(scores.logprobs) == set(LABELS)


# what `llama_print_system_info()` printed on 2026-12-02 for a native build on a Sapphire Rapids
# host (it segfaulted on the first decode) and for the portable build `make install` makes
NATIVE_ON_SAPPHIRE_RAPIDS = (
    "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX_VNNI = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | "
    "BMI2 = 1 | AVX512 = 1 | AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | AMX_INT8 = 1 | "
    "LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | "
)
PORTABLE = (
    "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | "
    "LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | "
)


def test_an_amx_build_of_llama_cpp_is_named_with_its_rebuild() -> None:
    from agentlens.providers.llamacpp import amx_warning

    warning = amx_warning(NATIVE_ON_SAPPHIRE_RAPIDS, "0.3.36")
    assert warning is not None and warning.startswith("warning: ")
    assert "llama.cpp#20824" in warning and "-DGGML_NATIVE=OFF" in warning
    assert warning.endswith("llama-cpp-python==0.3.36")  # the same release, rebuilt
    assert amx_warning(PORTABLE, "0.3.36") is None


def test_loading_the_model_warns_exactly_when_the_installed_build_has_amx(
    local_gguf_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import llama_cpp

    from agentlens.providers.llamacpp import LlamaCppProvider, amx_warning

    expected = amx_warning(llama_cpp.llama_print_system_info().decode(), llama_cpp.__version__)
    provider = LlamaCppProvider(str(local_gguf_path), n_ctx=256)
    provider._model()
    printed = capsys.readouterr().err
    assert (expected in printed) if expected else "AMX" not in printed


def test_in_process_backend_queues_and_stops_an_abandoned_call(local_gguf_path: Path) -> None:
    """Issue 24: one llama.cpp context answers one call at a time, so the client gives it one
    slot (a queued call's timeout has not started); a call given up on stops generating at its
    next token instead of finishing an answer nobody reads, and frees the context."""
    import contextlib
    import time

    from agentlens.providers.llamacpp import LlamaCppProvider

    client = get_provider(f"llamacpp:{local_gguf_path}", cache=False, max_concurrency=4)
    assert client.max_concurrency == 1
    provider = LlamaCppProvider(str(local_gguf_path))
    story = [{"role": "user", "content": "Tell a very long story about a dragon."}]
    long = ChatRequest(messages=story, max_tokens=4000, temperature=0.8)

    async def abandon() -> float:
        await provider.chat(ChatRequest(messages=story, max_tokens=1))  # load the model first
        prompt = provider._llama.n_tokens  # the tokens in the context: this prompt's
        task = asyncio.create_task(provider.chat(long))
        deadline = time.monotonic() + 120
        # generating: 20 of its tokens are in the context (a fixed 3 s sleep used to stand in)
        while provider._llama.n_tokens < prompt + 20 and not task.done():
            assert time.monotonic() < deadline, "no token generated within 120 s"
            await asyncio.sleep(0.02)
        task.cancel()
        cancelled = time.perf_counter()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return time.perf_counter() - cancelled

    stopped_in = asyncio.run(abandon())
    assert stopped_in < 5, stopped_in  # 4000 tokens would take minutes
    assert provider._lock.acquire(blocking=False)  # the context is free again
    provider._lock.release()
    assert provider.n_ctx == 8192  # from the GGUF metadata (SmolLM2: llama.context_length)


def test_structured_answers_from_the_in_process_model(local_gguf_path: Path) -> None:
    """A grammar-constrained judge answer from the real 135M model is always a valid schema
    answer with a score (which says nothing of its quality), plus the score's distribution."""
    from agentlens.formats.stream import read_paths
    from agentlens.providers import ProvidersConfig, RetryPolicy
    from agentlens.reviews.judge.judge import JudgeSettings, review_trajectory
    from tests.conftest import BENCH

    trajs = read_paths([BENCH / "trajectories" / "psf__requests-1724"]).trajectories
    traj = min(trajs, key=lambda t: (len(t.steps), t.id))
    client = get_provider(
        f"llamacpp:{local_gguf_path}", cache=False, config=ProvidersConfig(timeout_s=900),
        retry=RetryPolicy(timeout_s=900, max_attempts=1),
    )  # fmt: skip
    settings = JudgeSettings(budget_tokens=800)
    review = asyncio.run(
        review_trajectory(client, traj, dimensions=["ToolCalls", "Pitfalls"], settings=settings)
    )
    for r in review.reviews.values():
        assert r.mode == "schema" and r.score in (0.0, 0.5, 1.0), r.unscored_reason
        assert isinstance(json.loads(r.answer, strict=False), dict)  # raw newlines allowed
        dist = r.distribution
        assert dist is not None and sum(dist.probabilities.values()) == pytest.approx(1.0)
        low, high = dist.expected_range
        assert 0.0 <= low <= high <= 1.0
        if dist.spread is not None:
            assert 0.0 <= dist.spread <= 0.5
    assert client.stats.retries == 0


def test_a_copy_of_the_model_elsewhere_reuses_its_cached_answers(
    local_gguf_path: Path, tmp_path: Path
) -> None:
    """The in-process model is keyed by its file's content: the same GGUF under another path (a
    new virtual environment's wheel) is served from the cache, without loading the model; a file
    replaced at the same path is not served the old answers."""
    request = ChatRequest(messages=[{"role": "user", "content": "Say hi."}], max_tokens=3)
    first = get_provider(f"llamacpp:{local_gguf_path}")
    answer = first.chat_sync(request)
    elsewhere = tmp_path / "venv" / local_gguf_path.name
    elsewhere.parent.mkdir()
    try:
        elsewhere.hardlink_to(local_gguf_path)
    except OSError:  # another file system
        import shutil

        shutil.copyfile(local_gguf_path, elsewhere)
    second = get_provider(f"llamacpp:{elsewhere}")
    again = second.chat_sync(request)
    assert (second.stats.calls, second.stats.cache_hits) == (0, 1)
    assert again.from_cache and again.text == answer.text
    assert second.provider._llama is None  # type: ignore[attr-defined]  # never loaded
    key = second.cache_name
    elsewhere.unlink()
    elsewhere.write_bytes(b"GGUF not a model")  # replaced in place: its answers are not these
    third = get_provider(f"llamacpp:{elsewhere}")
    assert third.name == second.name and third.cache_name != key
