"""What several scenario tests share: a scripted simulator (to inject answers a real model does
not give on demand) and a one-call fold run."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentlens.errors import ProviderError
from agentlens.providers import LLMClient
from agentlens.providers.retry import RetryPolicy
from agentlens.providers.types import ChatRequest, ChatResponse, OptionLogprobs
from agentlens.scenarios import Fold, FoldResult, RunSettings, load_persona, run_fold
from agentlens.scenarios.agents import agent_factory
from agentlens.scenarios.fold import AgentFactory
from agentlens.scenarios.scenario import Scenario
from tests.scenarios.conftest import scripted


class Scripted:
    """Answers from a list, in order; records each request. Out of answers, it fails as a
    provider does (a `ProviderError`)."""

    name = "scripted:sim"
    supports_logprobs = False

    def __init__(self, answers: Sequence[ChatResponse]) -> None:
        self.answers = list(answers)
        self.requests: list[ChatRequest] = []

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        if not self.answers:
            raise ProviderError(self.name, "no scripted answer left")
        return self.answers.pop(0)

    async def option_logprobs(self, *args: object, **kw: object) -> OptionLogprobs:
        raise NotImplementedError


def fold_run(
    scenario: Scenario,
    project: Path,
    out: Path,
    agent: str | AgentFactory,
    answers: list[ChatResponse],
    *,
    personas: tuple[str, ...] = ("default",),
    attempts: int = 1,
    **options: Any,
) -> FoldResult:
    """`agent` is an `--agent` string or a factory; `options` go to `RunSettings`."""
    client = LLMClient(Scripted(answers), retry=RetryPolicy(max_attempts=1))
    fold = Fold([scenario], [load_persona(p) for p in personas], attempts=attempts)
    make_agent = agent_factory(agent) if isinstance(agent, str) else agent
    settings = RunSettings(
        make_agent=make_agent, simulator=client, out=out, project=project, **options
    )
    return asyncio.run(run_fold(fold, settings))


def fixed_run(scenario: Scenario, project: Path, out: Path) -> FoldResult:
    """One user message answered by the fixing agent: a run that passes its checks."""
    return fold_run(
        replace(scenario, max_steps=1), project, out, scripted("fix"), [ChatResponse(text="Go.")]
    )
