"""Secrets never reach the judge by default. They are planted in a copy of a real trace and in the
final repository `review --repo` diffs (an agent that hard-coded keys, filled a `.env` and wrote a
database password into a YAML config, whose diff line starts with `+`); the
prompts are read as `--dump-prompts` writes them (the messages exactly as sent) and as the real
local model receives them (a recording wrapper around the in-process provider). With
`--no-redact` every planted secret is sent, so the checks can fail."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentlens import redaction
from agentlens.cli import main
from agentlens.demo.tiny_repo import create_repo
from agentlens.providers.llamacpp import LlamaCppProvider
from agentlens.providers.types import ChatRequest, ChatResponse
from tests.conftest import BENCH

TRACE = (
    BENCH / "trajectories" / "psf__requests-1724"
    / "psf__requests-1724-logs-gpt-4o-fail-25018754982_pta.json"
)  # fmt: skip
PLANTED = {
    "aws-key": "AKIAUJZDE8GXD6NCF10E",
    "aws-secret": "El2hpChYgCfrL1spNxnyVmihA/2O76UMFxFkM/R5",
    "github": "ghp_sMehGAkWvj7FAc9QeWJKY40uvSwMFLZDe1f8",
    "openai": "sk-proj-djAWtGSU8po_799NksnRH9ucAUsdMlHUvTCQCyEZDz-TddJ8HyS5SUkCnD8zRA9a9SkpX",
    "anthropic": "sk-ant-api03-hP9nhFyJfm5di4PzJ59FHz5r1pY4OjE2jBMptUsGr7CmY_uCu3ZR1zTOlUcR64cXQ",
    "db-password": "Sup3rvm14TUOizw",
    "private-key": "MIIEowIBAAKCAQEARKMGHZEM9YpvujA/C5Q52ryFlwRlOEVHzc0X0AWIRh/JUqBlIFXZ53Ncq",
    "yaml-password": "Tr0ub4dorYamlPw",
}
ENV = f"""AWS_ACCESS_KEY_ID={PLANTED["aws-key"]}
AWS_SECRET_ACCESS_KEY={PLANTED["aws-secret"]}
GITHUB_TOKEN={PLANTED["github"]}
OPENAI_API_KEY={PLANTED["openai"]}
ANTHROPIC_API_KEY={PLANTED["anthropic"]}
DATABASE_URL=postgres://admin:{PLANTED["db-password"]}@db.internal:5432/app
"""
PEM = f"""-----BEGIN RSA PRIVATE KEY-----
{PLANTED["private-key"]}
-----END RSA PRIVATE KEY-----
"""


@pytest.fixture(autouse=True)
def _redaction_switch_restored():
    before = redaction.switch()
    yield
    redaction.set_enabled(before)


def planted_trace(folder: Path) -> Path:
    """The real trace with the `.env` and the key shown in two tool outputs."""
    doc = json.loads(TRACE.read_text())
    states = sorted(doc["states"].values(), key=lambda s: s["step"])
    states[1]["observation"] += f"\n$ cat .env\n{ENV}"
    states[2]["observation"] += f"\n$ cat deploy_key.pem\n{PEM}"
    folder.mkdir()
    path = folder / TRACE.name
    path.write_text(json.dumps(doc))
    return path


def planted_repo(root: Path) -> Path:
    """The demo repository, its final state holding keys in a tracked module and a `.env`."""
    repo = create_repo(root)
    (repo / ".env").write_text("DEBUG=1\n")
    subprocess.run(["git", "-C", str(repo), "add", ".env"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "env"], check=True)
    (repo / ".env").write_text("DEBUG=1\n" + ENV)
    settings = repo / "calc" / "settings.py"
    settings.write_text(f'AWS_ACCESS_KEY_ID = "{PLANTED["aws-key"]}"\nDEPLOY_KEY = """{PEM}"""\n')
    database = repo / "database.yml"
    database.write_text(f"production:\n  username: app\n  password: {PLANTED['yaml-password']}\n")
    subprocess.run(["git", "-C", str(repo), "add", "-N", str(settings), str(database)], check=True)
    return repo


def leaked(text: str) -> list[str]:
    return [kind for kind, secret in PLANTED.items() if secret in text]


def dumped_prompts(tmp_path: Path, *global_flags: str) -> str:
    trace, repo = planted_trace(tmp_path / "traces"), planted_repo(tmp_path / "repo")
    out = tmp_path / "prompts"
    code = main([
        *global_flags, "review", str(trace), "--judge", "openai-compatible:http://127.0.0.1:9/v1#m",
        "--repo", str(repo), "--dump-prompts", str(out),
    ])  # fmt: skip
    assert code == 0
    files = sorted(out.rglob("*.json"))
    assert len(files) == 5
    return "\n".join(f.read_text() for f in files)


def test_prompts_hold_no_secret_of_the_trace_or_the_repo_diff(tmp_path: Path) -> None:
    sent = dumped_prompts(tmp_path)
    assert leaked(sent) == []
    assert "Final diff" in sent and "[REDACTED:" in sent and "AWS_ACCESS_KEY_ID" in sent


def test_no_redact_sends_the_secrets(tmp_path: Path) -> None:
    assert leaked(dumped_prompts(tmp_path, "--no-redact")) == list(PLANTED)


@pytest.mark.llm
def test_the_local_model_receives_no_secret(
    tmp_path: Path, local_gguf_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """One real call (EndResult, short answer): what the provider gets, and every output."""
    received: list[ChatRequest] = []
    real_chat = LlamaCppProvider.chat

    async def recording(self: LlamaCppProvider, request: ChatRequest) -> ChatResponse:
        received.append(request)
        return await real_chat(self, request)

    monkeypatch.setattr(LlamaCppProvider, "chat", recording)
    trace, repo = planted_trace(tmp_path / "traces"), planted_repo(tmp_path / "repo")
    out = tmp_path / "reviews.json"
    code = main([
        "review", str(trace), "--judge", f"llamacpp:{local_gguf_path}", "--dimension",
        "EndResult", "--repo", str(repo), "--budget-tokens", "600", "--free-text",
        "--max-tokens", "24", "--no-cache", "--out", str(out),
    ])  # fmt: skip
    assert code in (0, 4)  # 4: the 135M model left its one answer unscored
    assert len(received) == 1
    sent: Any = [m["content"] for r in received for m in r.messages]
    assert "Final diff" in str(sent) and "[REDACTED:" in str(sent)
    assert leaked(str(sent)) == []
    assert leaked(out.read_text() + capsys.readouterr().out) == []
