"""Chat regex verifiers (spec §3) on a real Claude Code session with 10 user messages. Expected
counts come from the raw JSONL here: the agent's text is the assistant entries' text blocks; tool
traffic is the tool_use inputs and the tool_result contents; the user's own words never count."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentlens.formats.load import read_path
from agentlens.verification.verifiers import run_verifier
from agentlens.verification.verifiers.base import VerifyContext
from tests.conftest import FORMATS

SESSION = FORMATS / "claude-code" / "jnarowski-agentcmd" / "full-session-two.jsonl"
PATTERN = "(?i)button"


def raw_counts() -> tuple[int, int, int]:
    """(assistant text, tool inputs + results, user text) matches in the raw session."""
    pattern = re.compile(PATTERN)
    agent = tools = user = 0
    for line in SESSION.read_text().splitlines():
        entry = json.loads(line)
        content = (entry.get("message") or {}).get("content")
        blocks = content if isinstance(content, list) else []
        if entry.get("type") == "user" and isinstance(content, str):
            user += len(pattern.findall(content))
        for block in blocks:
            kind = block.get("type")
            if entry.get("type") == "assistant" and kind == "text":
                agent += len(pattern.findall(block["text"]))
            elif kind == "tool_use":
                tools += len(pattern.findall(json.dumps(block["input"])))
            elif kind == "tool_result":
                result = block.get("content")
                if not isinstance(result, str):
                    result = " ".join(
                        x.get("text", "") for x in result or [] if isinstance(x, dict)
                    )
                tools += len(pattern.findall(result))
            elif entry.get("type") == "user" and kind == "text":
                user += len(pattern.findall(block["text"]))
    return agent, tools, user


@pytest.fixture(scope="module")
def ctx(tmp_path_factory: pytest.TempPathFactory) -> VerifyContext:
    repo = tmp_path_factory.mktemp("repo")
    return VerifyContext(repo=Path(repo), trajectory=read_path(SESSION)[0])


def count(spec: dict, ctx: VerifyContext) -> int:
    result = run_verifier({**spec, "reg_exp_pattern": PATTERN}, ctx)
    assert result.status in ("pass", "fail"), result.reason
    return int(result.metrics["count"])


def test_chat_count_is_the_agents_messages_only(ctx: VerifyContext) -> None:
    agent, _, user = raw_counts()
    assert user > 0  # the user asked about the button: those words must not count
    assert count({"type": "ChatRegExpCountVerifier"}, ctx) == agent
    spec = {"type": "ChatRegExpCountVerifier", "strict_count": True, "num_expected": agent}
    assert run_verifier({**spec, "reg_exp_pattern": PATTERN}, ctx).status == "pass"


def test_chat_or_tool_count_adds_tool_arguments_and_results(ctx: VerifyContext) -> None:
    agent, tools, _ = raw_counts()
    assert count({"type": "ChatOrToolRegExpCountVerifier"}, ctx) == agent + tools
