"""The simulator's prompt, how its answers are read, and the re-sampling rule (spec §4.2-4.3).
A scripted provider stands in for a misbehaving model: it injects the answers under test."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from agentlens.providers import LLMClient
from agentlens.providers.pricing import Price, PriceTable
from agentlens.providers.types import ChatResponse, TokenUsage
from agentlens.scenarios import SimulatedUser, load_persona
from agentlens.scenarios.personas import BUILT_IN
from agentlens.scenarios.scenario import Scenario
from agentlens.scenarios.simulated_user import MAX_RESAMPLES, NO_MESSAGE, TERMINATE_TOOL
from tests.scenarios.helpers import Scripted

TERMINATE_CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": TERMINATE_TOOL, "arguments": '{"termination_reason": "all done"}'},
}


def user(
    answers: Sequence[ChatResponse], scenario: Scenario | None = None
) -> tuple[SimulatedUser, Scripted]:
    provider = Scripted(answers)
    scenario = scenario or Scenario("s", [], user_instruction="Rename foo to bar everywhere.")
    prices = PriceTable({"sim": Price(prompt=1.0, completion=2.0, cached=0.0)})  # $ per 1M
    sim = SimulatedUser(
        LLMClient(provider, prices=prices),
        load_persona("toxic"),
        scenario,
        agent_name="Codex",
        project="/work/p",
        session_key="k",
    )
    return sim, provider


def test_system_prompt_carries_task_persona_rules_and_project() -> None:
    sim, _ = user([])
    system = sim.messages[0]["content"]
    for part in (
        "Rename foo to bar everywhere.",
        BUILT_IN["toxic"],
        "Codex coding agent",
        "Never ask for anything beyond the task",
        "at most 5 sentences",
        "/work/p",
        TERMINATE_TOOL,
        "TERMINATE_DIALOG: <reason>",
    ):
        assert part in system


def test_terminate_by_tool_call_and_by_text_line() -> None:
    sim, provider = user(
        [
            ChatResponse(text="", tool_calls=[TERMINATE_CALL]),
            ChatResponse(text="TERMINATE_DIALOG: the agent finished"),
        ]
    )
    first = asyncio.run(sim.reply("turn 2", first_reply=False))
    second = asyncio.run(sim.reply("turn 3", first_reply=False))
    assert (first.terminate, second.terminate) == ("all done", "the agent finished")
    assert provider.requests[0].tools[0]["function"]["name"] == TERMINATE_TOOL


def test_a_termination_in_reply_to_the_first_turn_is_resampled() -> None:
    answers = [ChatResponse(text="", tool_calls=[TERMINATE_CALL])] * 2 + [
        ChatResponse(text="Go on.")
    ]
    sim, provider = user(answers)
    turn = asyncio.run(sim.reply("first agent turn", first_reply=True))
    assert (turn.text, turn.terminate, turn.resamples) == ("Go on.", None, 2)
    seeds = {r.seed for r in provider.requests}
    assert len(seeds) == 3  # each re-sample is a new request, so a cache cannot repeat one answer
    # only the accepted answer enters the simulator's transcript
    assert [m["content"] for m in sim.messages[-2:]] == ["first agent turn", "Go on."]


def test_after_five_resamples_the_termination_stands() -> None:
    sim, provider = user([ChatResponse(text="", tool_calls=[TERMINATE_CALL])] * (MAX_RESAMPLES + 1))
    turn = asyncio.run(sim.reply("first agent turn", first_reply=True))
    assert turn.terminate == "all done" and len(provider.requests) == MAX_RESAMPLES + 1


def test_empty_answers_are_resampled_then_end_the_dialog() -> None:
    sim, _ = user([ChatResponse(text="  ")] * (MAX_RESAMPLES + 1))
    assert asyncio.run(sim.reply("turn", first_reply=False)).terminate == NO_MESSAGE


def test_fixed_first_message_is_sent_verbatim_without_a_call() -> None:
    scenario = Scenario(
        "s", [], first_user_message="STARTING STEP [1]\nDo X.", fixed_first_message=True
    )
    sim, provider = user([], scenario)
    assert asyncio.run(sim.first_message(scenario)).text == "STARTING STEP [1]\nDo X."
    assert provider.requests == []
    assert "Do X." in sim.messages[0]["content"]  # no instruction file: the message is the task


def test_spend_is_counted() -> None:
    """The client prices each call (250k prompt tokens at $1/M, 100k completion at $2/M)."""
    usage = TokenUsage(prompt_tokens=250_000, completion_tokens=100_000)
    sim, _ = user([ChatResponse(text="ok", usage=usage)] * 2)
    for _ in range(2):
        asyncio.run(sim.reply("t", first_reply=False))
    assert (sim.spent, sim.calls) == (pytest.approx(0.9), 2)


def test_unknown_persona_names_the_choices(tmp_path: Path) -> None:
    from agentlens.errors import ConfigError

    with pytest.raises(ConfigError, match="default, helpful, toxic"):
        load_persona("grumpy")
    (tmp_path / "grumpy.txt").write_text("You are grumpy.\n")
    assert load_persona(str(tmp_path / "grumpy.txt")).name == "grumpy"


def test_the_terminate_line_may_follow_a_thank_you() -> None:
    sim, _ = user([ChatResponse(text="Great, thanks!\nTERMINATE_DIALOG: done")])
    assert asyncio.run(sim.reply("turn", first_reply=False)).terminate == "done"


def test_cached_answers_cost_nothing_now() -> None:
    sim, _ = user([ChatResponse(text="ok", cost=0.5, from_cache=True)])
    asyncio.run(sim.reply("t", first_reply=False))
    assert sim.spent == 0.0
