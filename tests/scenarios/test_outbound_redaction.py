"""Secrets a scenario's workspace holds never reach the models of a live run: the built-in
agent cats a planted file and copies it, and repeats a key in its reply; every request the
simulated user's and the agent's providers receive is captured (`Scripted`)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentlens.providers import LLMClient
from agentlens.providers.retry import RetryPolicy
from agentlens.providers.types import ChatResponse
from agentlens.scenarios import Fold, RunSettings, load_persona, run_fold
from agentlens.scenarios.agent_view import TOOL_RESULT_CHARS
from agentlens.scenarios.agents import BashAgent
from agentlens.scenarios.scenario import Scenario
from tests.scenarios.helpers import Scripted

PLANTED = {
    "aws": "AKIAQ3EGRZ7LMN4TXW2P",
    "github": "ghp_Zq8rT2vWx9yB4nM6kL1pQ3sD5fG7hJ0aC2eR",
    "openai": "sk-proj-Xy9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXcVbNm1234",
    "password": "Corr3ct-Horse-Battery",
    "private-key": "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0",
}
FILE = f"""AWS_ACCESS_KEY_ID={PLANTED["aws"]}
GITHUB_TOKEN={PLANTED["github"]}
OPENAI_API_KEY={PLANTED["openai"]}
db_url: postgres://app@db/prod?sslmode=require password={PLANTED["password"]}
-----BEGIN RSA PRIVATE KEY-----
{PLANTED["private-key"]}
-----END RSA PRIVATE KEY-----
"""


class RecordingBuiltIn:
    """The built-in agent with its model's replies scripted; its shell is real."""

    takes_mcp = False
    own_mcp_client = True

    def __init__(self, replies: list[str]) -> None:
        self.model = Scripted([ChatResponse(text=reply) for reply in replies])

    def __call__(self, folder: Path, mcp_config: Path | None = None) -> Any:
        return BashAgent(LLMClient(self.model, retry=RetryPolicy(max_attempts=1)))


def sent_texts(
    redact: bool, project: Path, out: Path, monkeypatch: pytest.MonkeyPatch, file: str = FILE
) -> str:
    monkeypatch.setenv("AGENTLENS_NO_REDACT", "0" if redact else "1")
    (project / "deploy.env").write_text(file)
    agent = RecordingBuiltIn([
        "THOUGHT: look.\n\n```bash\ncat deploy.env && cp deploy.env copy.env\n```",
        f"deploy.env holds the AWS key {PLANTED['aws']} and four more secrets.",
    ])  # fmt: skip
    user = Scripted([ChatResponse(text="What is in deploy.env?"), ChatResponse(text="Thanks.")])
    scenario = Scenario("leak", [], max_steps=2, user_instruction="Ask what deploy.env holds.")
    fold = Fold([scenario], [load_persona("default")], attempts=1)
    simulator = LLMClient(user, retry=RetryPolicy(max_attempts=1))
    settings = RunSettings(make_agent=agent, simulator=simulator, out=out, project=project)
    asyncio.run(run_fold(fold, settings))
    requests = agent.model.requests + user.requests
    assert len(agent.model.requests) >= 2 and len(user.requests) >= 2  # both saw the file
    return "\n".join(str(m.get("content")) for r in requests for m in r.messages)


def test_live_prompts_are_sent_redacted(
    calc_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = sent_texts(True, calc_project, tmp_path / "out", monkeypatch)
    assert [kind for kind, secret in PLANTED.items() if secret in sent] == []
    assert "[REDACTED:" in sent and "deploy.env holds the AWS key" in sent


def test_no_redact_sends_them_as_they_are(
    calc_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = sent_texts(False, calc_project, tmp_path / "out", monkeypatch)
    assert [kind for kind, secret in PLANTED.items() if secret not in sent] == []


def test_a_secret_the_cut_falls_in_sends_no_part_of_itself(
    calc_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The built-in agent's command output and the simulator's view of it are cut at 10,000
    characters before the request is masked: a key the cut fell in went out as its first
    characters (`sk-proj-Xy`), too short for a detector to know. The text is masked first."""
    opening = "<returncode>0</returncode>\n<output>\n"  # before the file in the observation
    line = "rotated, was "
    padding = "# settings for the deploy script\n" * 400
    padding = padding[: TOOL_RESULT_CHARS - 10 - len(opening) - len(line) - 1] + "\n"
    sent = sent_texts(True, calc_project, tmp_path / "out", monkeypatch,
                      file=f"{padding}{line}{PLANTED['openai']}\n")  # fmt: skip
    assert f"{line}[REDACTED:openai-key]" in sent
    assert f"{line}{PLANTED['openai'][:4]}" not in sent
