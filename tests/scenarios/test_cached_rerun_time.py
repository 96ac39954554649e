"""A scenario rerun served from the response cache: the built-in agent's model replies take no
time, so the rerun's agent time is not the model's and `compare` must not read it as a speed-up
(or flag it). The model is scripted with a real delay, the shell and the cache are real."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentlens.cli import main
from agentlens.formats.stream import read_paths
from agentlens.providers import LLMClient
from agentlens.providers.cache import ResponseCache
from agentlens.providers.retry import RetryPolicy
from agentlens.providers.types import ChatRequest, ChatResponse, TokenUsage
from agentlens.reviews.compare import telemetry_checks
from agentlens.reviews.telemetry import RunTelemetry
from agentlens.scenarios import Fold, RunSettings, load_persona, run_fold
from agentlens.scenarios.agents import BashAgent
from agentlens.scenarios.scenario import Scenario
from tests.scenarios.helpers import Scripted

REPLIES = [
    "THOUGHT: look.\n\n```bash\nls\n```",
    "The project has a calculator and its tests.",
    "You are welcome.",
]
DELAY_S = 0.3


class Slow(Scripted):
    """A model that takes DELAY_S per reply, as a real one takes its time."""

    async def chat(self, request: ChatRequest) -> ChatResponse:
        await asyncio.sleep(DELAY_S)
        return await super().chat(request)


class CachedBuiltIn:
    takes_mcp = False
    own_mcp_client = True

    def __init__(self, cache: ResponseCache) -> None:
        self.cache = cache

    def __call__(self, folder: Path, mcp_config: Path | None = None) -> Any:
        usage = TokenUsage(prompt_tokens=200, completion_tokens=20)
        model = Slow([ChatResponse(text=reply, usage=usage) for reply in REPLIES])
        return BashAgent(LLMClient(model, cache=self.cache, retry=RetryPolicy(max_attempts=1)))


def run_once(project: Path, out: Path, cache: ResponseCache) -> RunTelemetry:
    user = Scripted([ChatResponse(text="What is in this project?"), ChatResponse(text="Thanks.")])
    scenario = Scenario("look", [], max_steps=2, user_instruction="Ask what the project holds.")
    fold = Fold([scenario], [load_persona("default")], attempts=1)
    simulator = LLMClient(user, cache=cache, retry=RetryPolicy(max_attempts=1))
    settings = RunSettings(
        make_agent=CachedBuiltIn(cache), simulator=simulator, out=out, project=project
    )
    asyncio.run(run_fold(fold, settings))
    return RunTelemetry.of(read_paths([out / "trajectories"]).trajectories)


def test_a_cached_rerun_is_not_timed_against_the_original(
    calc_project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    original = run_once(calc_project, tmp_path / "first", cache)
    rerun = run_once(calc_project, tmp_path / "again", cache)
    assert original.trajectories[0].time_s >= 3 * DELAY_S  # three replies, each DELAY_S
    assert rerun.to_dict()["responses_from_cache"] == 3  # said, not hidden
    checks = {c.name: c for c in telemetry_checks(original, rerun)}
    for name in ("time", "throughput"):
        assert not checks[name].alert, checks[name].reason
        assert "served from the response cache" in checks[name].reason
    assert not checks["generation tokens"].warning  # the rest still compares
    # the original reply's duration is kept beside the mark, for whoever wants it
    marks = [s.raw for t in read_paths([tmp_path / "again" / "trajectories"]).trajectories
             for s in t.steps if s.raw]  # fmt: skip
    assert len(marks) == 3 and all(m["from_cache"] and m["latency_s"] >= DELAY_S for m in marks)
    capsys.readouterr()
    assert main(["telemetry", str(tmp_path / "again" / "trajectories")]) == 0
    assert "3 model replies served from the response cache" in capsys.readouterr().out
