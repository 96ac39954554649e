"""Retries, timeouts, concurrency and budgets against a real, misbehaving HTTP server."""

from __future__ import annotations

import asyncio
import math
import time
from pathlib import Path

import pytest

from agentlens.errors import BudgetExceededError, ConfigError, ProviderError
from agentlens.providers import (
    Budget,
    ChatRequest,
    LLMClient,
    RetryPolicy,
    RunLedger,
    get_provider,
)
from agentlens.providers.pricing import PriceTable
from agentlens.providers.registry import make_backend
from tests.providers.fault_server import COMPLETION_TOKENS, PROMPT_TOKENS, FaultServer

FAST = RetryPolicy(max_attempts=6, base_delay_s=0.01, max_delay_s=0.05, timeout_s=5.0)


def ask(text: str) -> ChatRequest:
    return ChatRequest(messages=[{"role": "user", "content": text}], max_tokens=4)


def test_transient_faults_are_retried_until_success(fault_server: FaultServer) -> None:
    fault_server.queue("429:0.3", "500", "cut", "malformed")
    client = get_provider(fault_server.model(), cache=False, retry=FAST)
    started = time.perf_counter()
    answer = client.chat_sync(ask("q1"))
    assert answer.text == "re: q1"
    assert [r["action"] for r in fault_server.requests] == [
        "429:0.3",
        "500",
        "cut",
        "malformed",
        "ok",
    ]
    assert time.perf_counter() - started >= 0.3  # the retry-after was honoured


def test_a_hanging_call_times_out_and_is_retried(fault_server: FaultServer) -> None:
    fault_server.queue("hang:3")
    policy = RetryPolicy(max_attempts=3, base_delay_s=0.01, timeout_s=0.5)
    client = get_provider(fault_server.model(), cache=False, retry=policy)
    started = time.perf_counter()
    assert client.chat_sync(ask("q")).text == "re: q"
    assert time.perf_counter() - started >= 0.5
    assert [r["action"] for r in fault_server.requests] == ["hang:3", "ok"]


def test_client_errors_are_final_and_retries_are_bounded(fault_server: FaultServer) -> None:
    fault_server.queue("400")
    client = get_provider(fault_server.model(), cache=False, retry=FAST)
    with pytest.raises(ProviderError, match=r"HTTP 400.*scripted 400"):
        client.chat_sync(ask("q"))
    assert len(fault_server.requests) == 1

    fault_server.queue(*["500"] * 3)
    client = get_provider(fault_server.model(), cache=False, retry=RetryPolicy(3, 0.01, 0.02))
    with pytest.raises(ProviderError, match="gave up after 3 attempts; last: HTTP 500"):
        client.chat_sync(ask("q2"))
    assert len(fault_server.requests) == 4
    assert client.stats.failures == 1


def test_requests_in_flight_are_bounded(fault_server: FaultServer) -> None:
    fault_server.queue(*["slow:0.6"] * 9)  # long enough to overlap on a loaded machine
    client = get_provider(fault_server.model(), cache=False, max_concurrency=3)
    result = client.run(client.map(client.chat, [ask(f"q{i}") for i in range(9)]))
    assert result.complete
    assert fault_server.max_in_flight == 3
    assert [r.text for r in result.results if r] == [f"re: q{i}" for i in range(9)]


def test_token_budget_stops_cleanly_and_names_what_was_not_done(fault_server: FaultServer) -> None:
    budget = Budget(max_tokens=100)
    client = get_provider(fault_server.model(), cache=False, budget=budget, max_concurrency=1)
    result = client.run(client.map(client.chat, [ask(f"q{i}") for i in range(20)]))
    calls = math.ceil(100 / (PROMPT_TOKENS + COMPLETION_TOKENS))  # the call crossing 100 still ran
    assert len(fault_server.requests) == calls
    assert result.not_done == list(range(calls, 20))
    assert result.summary() == (
        f"{calls} of 20 done; not done (items {calls}-19): budget spent: {calls * 15} of 100 tokens"
    )


def test_dollar_budget_uses_the_price_table(fault_server: FaultServer) -> None:
    prices = PriceTable.load({"priced": {"prompt": 1000.0, "completion": 2000.0}})
    per_call = (PROMPT_TOKENS * 1000.0 + COMPLETION_TOKENS * 2000.0) / 1e6  # $0.02
    client = LLMClient(
        make_backend(fault_server.model("priced")),
        role="judge",
        budget=Budget(max_cost=0.05),
        max_concurrency=1,
        prices=prices,
    )
    result = client.run(client.map(client.chat, [ask(f"q{i}") for i in range(10)]))
    assert len(fault_server.requests) == math.ceil(0.05 / per_call)
    assert client.stats.cost == pytest.approx(3 * per_call)
    assert result.not_done == list(range(3, 10))


def test_budget_error_is_raised_for_a_single_call(fault_server: FaultServer) -> None:
    client = get_provider(fault_server.model(), cache=False, budget=Budget(max_tokens=1))
    client.chat_sync(ask("first"))
    with pytest.raises(BudgetExceededError, match="15 of 1 tokens"):
        client.chat_sync(ask("second"))


def test_sync_helpers_work_across_event_loops(fault_server: FaultServer) -> None:
    client = get_provider(fault_server.model(), cache=False)
    assert client.chat_sync(ask("a")).text == "re: a"
    assert asyncio.run(client.chat(ask("b"))).text == "re: b"
    assert client.chat_sync(ask("c")).text == "re: c"


def test_costs_are_kept_per_role_in_stats_and_ledger(
    fault_server: FaultServer, tmp_path: Path
) -> None:
    prices = PriceTable.load({"priced": {"prompt": 1000.0, "completion": 2000.0}})
    per_call = (PROMPT_TOKENS * 1000.0 + COMPLETION_TOKENS * 2000.0) / 1e6
    ledger = RunLedger(tmp_path / "ledger.sqlite", run_id="roles")
    clients = {
        role: LLMClient(
            make_backend(fault_server.model("priced")), role=role, ledger=ledger, prices=prices
        )
        for role in ("judge", "user_simulator")
    }
    for role, n in (("judge", 3), ("user_simulator", 2)):
        client = clients[role]
        client.run(client.map(client.chat, [ask(f"{role}{i}") for i in range(n)]))
        assert client.stats.calls == n
        assert client.stats.cost == pytest.approx(n * per_call)
    totals = {t.role: t for t in ledger.totals_by_role()}
    assert totals["judge"].calls == 3 and totals["judge"].cost == pytest.approx(3 * per_call)
    assert totals["user_simulator"].prompt_tokens == 2 * PROMPT_TOKENS


def test_a_dollar_budget_on_an_unpriced_model_is_refused_before_calling(
    fault_server: FaultServer,
) -> None:
    client = LLMClient(make_backend(fault_server.model("no-price")), budget=Budget(max_cost=1.0))
    with pytest.raises(ConfigError, match=r"no price for .* add the model to"):
        client.chat_sync(ask("q"))
    assert fault_server.requests == []


def test_base_url_from_the_environment(
    fault_server: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VLLM_BASE_URL", fault_server.url)
    assert get_provider("vllm:qwen", cache=False).chat_sync(ask("v")).text == "re: v"
    assert fault_server.requests[0]["body"]["model"] == "qwen"
