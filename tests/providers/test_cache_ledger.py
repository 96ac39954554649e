"""Response cache, run ledger and resume after a real kill; keys never reach disk."""

from __future__ import annotations

import asyncio
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from agentlens.cli import main as cli_main
from agentlens.errors import ConfigError
from agentlens.providers import ChatRequest, ResponseCache, RunLedger, get_provider
from agentlens.providers.config import ProvidersConfig, from_mapping
from tests.providers.fault_server import FaultServer

ROOT = Path(__file__).resolve().parents[2]


def ask(text: str) -> ChatRequest:
    return ChatRequest(messages=[{"role": "user", "content": text}])


def test_a_rerun_is_served_from_the_cache(fault_server: FaultServer, tmp_path: Path) -> None:
    first = get_provider(fault_server.model())
    answers = first.run(first.map(first.chat, [ask(f"q{i}") for i in range(5)]))
    again = get_provider(fault_server.model())
    repeat = again.run(again.map(again.chat, [ask(f"q{i}") for i in range(5)]))
    assert len(fault_server.requests) == 5
    assert again.stats.cache_hits == 5 and again.stats.calls == 0
    assert all(r is not None and r.from_cache for r in repeat.results)
    assert [r.text for r in repeat.results if r] == [r.text for r in answers.results if r]

    no_cache = get_provider(fault_server.model(), cache=False)
    no_cache.chat_sync(ask("q0"))
    assert len(fault_server.requests) == 6


def test_cache_is_keyed_by_the_full_request(fault_server: FaultServer) -> None:
    client = get_provider(fault_server.model())
    client.chat_sync(ask("q"))
    client.chat_sync(ChatRequest(messages=[{"role": "user", "content": "q"}], temperature=0.5))
    client.chat_sync(ask("q"))
    get_provider(fault_server.model("other-model")).chat_sync(ask("q"))
    assert len(fault_server.requests) == 3


def test_the_api_key_is_sent_but_never_stored(
    fault_server: FaultServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-7f3a9c1e-SECRET"
    monkeypatch.setenv("MY_KEY", secret)
    config = from_mapping(
        {
            "backends": {"box": {"base_url": fault_server.url, "api_key_env": "MY_KEY"}},
            "cache": str(tmp_path / "keycache.sqlite"),
        }
    )
    ledger = RunLedger(tmp_path / "ledger.sqlite", run_id="r")
    client = get_provider("box:fault-model", config=config, ledger=ledger)
    client.chat_sync(ask("hello"))
    client.option_logprobs_sync([{"role": "user", "content": "pick"}], ["A", "B"])
    assert fault_server.requests[0]["headers"]["authorization"] == f"Bearer {secret}"
    files = [p for p in tmp_path.iterdir() if p.name.startswith(("keycache", "ledger"))]
    assert len(files) >= 2
    for path in files:
        assert secret.encode() not in path.read_bytes(), path
    assert secret not in repr(client.provider) and secret not in client.name


def test_option_logprobs_merge_variants_and_floor_absent_labels(fault_server: FaultServer) -> None:
    client = get_provider(fault_server.model(), cache=False)
    result = client.option_logprobs_sync(
        [{"role": "user", "content": "?"}], ["A", "B", "D"], floor=-30.0
    )
    # served top list: "A" -0.5, " A" -2.0, "B" -1.5; "D" absent
    expected_a = math.log(math.exp(-0.5) + math.exp(-2.0))
    assert result.logprobs == pytest.approx({"A": expected_a, "B": -1.5, "D": -30.0})
    assert {k: o.source for k, o in result.options.items()} == {
        "A": "top_k",
        "B": "top_k",
        "D": "floor",
    }
    assert result.any_floored
    body = fault_server.requests[0]["body"]
    assert body["logprobs"] is True and body["top_logprobs"] == 20 and body["max_tokens"] == 1


def test_a_killed_run_resumes_without_repeating_finished_calls(tmp_path: Path) -> None:
    ledger_path = tmp_path / "ledger.sqlite"
    with FaultServer(default_delay_s=0.15) as server:
        script = str(Path(__file__).with_name("_resume_run.py"))
        args = [sys.executable, script, server.model(), str(ledger_path), "50"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}  # the cache path comes from conftest
        proc = subprocess.Popen([*args, "run-1"], env=env, stdout=subprocess.PIPE, text=True)
        ledger = RunLedger(ledger_path, run_id="run-1")
        deadline = time.monotonic() + 30
        while ledger.count() < 20 and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        recorded = set(_ledger_contents(ledger_path))  # the process is dead: this is final
        assert 20 <= len(recorded) < 50
        first_run = server.settled_count()  # requests sent just before the kill may land late

        resumed_run = subprocess.run([*args, "run-1"], env=env, capture_output=True, text=True)
        resumed = server.contents()[first_run:]
        assert len(resumed) == 50 - len(recorded)
        assert not set(resumed) & recorded
        assert set(resumed) | recorded == {f"q{i}" for i in range(50)}
        calls, ledger_hits, cache_hits = map(int, resumed_run.stdout.split()[-3:])
        assert (calls, ledger_hits, cache_hits) == (50 - len(recorded), len(recorded), 0)

        # A new run of the same evaluation is served entirely by the response cache.
        fresh = subprocess.run([*args, "run-2"], env=env, capture_output=True, text=True)
        assert len(server.contents()) == first_run + len(resumed)
        assert fresh.stdout.split()[-3:] == ["0", "0", "50"]
        assert fresh.stdout.startswith("50 of 50 done")


def _ledger_contents(path: Path) -> list[str]:
    rows = sqlite3.connect(path).execute("SELECT payload FROM calls").fetchall()
    return [orjson.loads(p)["text"].removeprefix("re: ") for (p,) in rows]


def test_cache_command_reports_and_clears(
    fault_server: FaultServer, capsys: pytest.CaptureFixture[str]
) -> None:
    client = get_provider(fault_server.model())
    client.chat_sync(ask("a"))
    client.chat_sync(ask("b"))
    get_provider(fault_server.model()).chat_sync(ask("a"))
    assert cli_main(["cache", "stats"]) == 0
    out = capsys.readouterr().out
    assert "entries: 2  hits: 1" in out and f"{fault_server.model()}: 2" in out
    assert cli_main(["cache", "clear", "--yes"]) == 0
    assert "removed 2 cached responses" in capsys.readouterr().out
    assert ResponseCache(ProvidersConfig.load().cache_path).stats().entries == 0


def test_a_ledger_hit_fills_a_cache_the_killed_run_did_not_reach(tmp_path: Path) -> None:
    """Killed between the ledger record and the cache write: the resumed run serves the answer
    from the ledger, and must store it in the cache, or the next run pays for it again (this
    made the test above fail now and then under load)."""
    from agentlens.providers import LLMClient, ResponseCache
    from agentlens.providers.types import ChatRequest, ChatResponse
    from tests.scenarios.helpers import Scripted

    request = ChatRequest(messages=[{"role": "user", "content": "q"}])
    killed = LLMClient(
        Scripted([ChatResponse(text="a")]), ledger=RunLedger(tmp_path / "l", "run-1")
    )
    asyncio.run(killed.chat(request))  # recorded in the ledger only, as if killed right after
    cache = ResponseCache(tmp_path / "cache.sqlite")
    resumed = LLMClient(Scripted([]), ledger=RunLedger(tmp_path / "l", "run-1"), cache=cache)
    assert asyncio.run(resumed.chat(request)).text == "a"  # a ledger hit, no call
    fresh = LLMClient(Scripted([]), cache=cache)  # a new run: no ledger, and no answers left
    assert asyncio.run(fresh.chat(request)).text == "a"


def test_a_cache_file_that_is_no_database_is_one_line_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cache file overwritten or cut short (a full disk, a copy gone wrong) used to end every
    command with "internal error … this is an AgentLens bug", `cache clear` included."""
    broken = tmp_path / "cache.sqlite"
    broken.write_bytes((ROOT / "README.md").read_bytes())
    monkeypatch.setenv("AGENTLENS_LLM_CACHE", str(broken))
    for command in (["cache", "stats"], ["cache", "clear", "--yes"]):
        assert cli_main(command) == 2
        err = capsys.readouterr().err
        assert f"{broken}: not an LLM response cache" in err and "internal error" not in err
        assert len(err.strip().splitlines()) == 1
    with pytest.raises(ConfigError, match="not an LLM response cache"):
        ResponseCache(broken)  # what every command that calls a model opens


def test_a_cache_path_that_does_not_exist_is_one_line_and_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`cache stats` on a mistyped path used to make an empty database there (and its folder)
    and report 0 entries, as if the cache were merely empty."""
    missing = tmp_path / "no-such-folder" / "cache.sqlite"
    monkeypatch.setenv("AGENTLENS_LLM_CACHE", str(missing))
    for command in (["cache", "stats"], ["cache", "clear", "--yes"]):
        assert cli_main(command) == 2
        err = capsys.readouterr().err
        assert f"{missing}: no LLM response cache there" in err
        assert len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_cache_stats_prints_a_long_model_string_on_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In a pipe (80 columns) a GGUF path or server URL used to be folded mid-name."""
    path = tmp_path / "cache.sqlite"
    model = "openai-compatible:http://a-server-name-long-enough.example:8011/v1#smollm2-135m-q4"
    ResponseCache(path).put("k", model, "chat", b"{}")
    monkeypatch.setenv("AGENTLENS_LLM_CACHE", str(path))
    assert cli_main(["cache", "stats"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"cache: {path}" and f"  {model}: 1" in lines
