"""A stdio MCP server a scenario names is untrusted code: it gets the toolchain variables and
what its entry's `env` gives it (`run` prints those), never the rest of the caller's environment
(the judge's and simulator's API keys). The server here is a real shell printing its environment
to stderr, which `agentlens mcp` shows when it fails."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from agentlens.demo.tiny_repo import create_repo
from tests.cli.conftest import Run


def test_a_server_gets_only_what_its_entry_gives(
    run_cli: Callable[..., Run], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "caller-key-not-for-servers")
    monkeypatch.setenv("SERVER_TOKEN", "given-on-purpose")
    dump = "env | grep -E '^(OPENAI_API_KEY|GIVEN|PATH)=' | cut -c1-40 >&2; exit 1"
    server = {"name": "envdump", "command": "sh", "args": ["-c", dump],
              "env": {"GIVEN": "$SERVER_TOKEN$"}}  # fmt: skip
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"name": "env", "verifiers": [], "mcp_servers": [server]}))
    project = create_repo(tmp_path / "calc")
    done = run_cli("mcp", str(scenario), "--project", str(project), "--json")
    assert done.code == 1
    result = json.dumps(json.loads(done.out))
    assert "caller-key-not-for-servers" not in result and "OPENAI_API_KEY" not in result
    assert "GIVEN=***" in result and "PATH=/" in result  # given, blanked; toolchains found
