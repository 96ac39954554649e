"""A stdio MCP server a scenario names is untrusted code: it gets the toolchain variables and
what its entry's `env` gives it (`run` prints those), never the rest of the caller's environment
(the judge's and simulator's API keys). The server here is a real shell printing its environment
to stderr, which `agentlens mcp` shows when it fails."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agentlens.demo.tiny_repo import create_repo
from tests.cli.conftest import Run

SRC = str(Path(__file__).resolve().parents[2] / "src")


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


def test_without_bubblewrap_the_check_refuses_and_takes_the_switch_it_names(
    tmp_path: Path,
) -> None:
    """Failure injection: a PATH without `bwrap`. The one-line refusal names `--no-sandbox`,
    and `agentlens mcp` takes it: the server then starts, uncontained, with the warning."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("git", "prlimit", "setpriv", "sh"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{bin_dir}", "PYTHONPATH": SRC}
    server = {"name": "says-hi", "command": "sh", "args": ["-c", "echo hi-from-server >&2"]}
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"name": "s", "verifiers": [], "mcp_servers": [server]}))
    argv = [sys.executable, "-m", "agentlens", "mcp", str(scenario), "--project", str(tmp_path)]
    refused = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    assert refused.returncode == 2 and "pass --no-sandbox" in refused.stderr
    uncontained = subprocess.run([*argv, "--no-sandbox"], capture_output=True, text=True,
                                 env=env, timeout=120)  # fmt: skip
    # said when the option is read, before anything ran: "will run", not "ran"
    assert "--no-sandbox: agent-written code will run without isolation" in uncontained.stderr
    assert "hi-from-server" in uncontained.stdout  # it ran (and failed the handshake)


def test_the_check_starts_a_server_under_its_scenarios_sandbox(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    """A scenario granting `sandbox: {network: true}` gets it in `agentlens mcp` as in a run:
    the server reaches a listener on this machine."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        reach = f"import socket, sys; socket.create_connection(('127.0.0.1', {port})); "
        reach += "sys.exit('reached the listener')"
        server = {"name": "net", "command": sys.executable, "args": ["-c", reach]}
        doc = {"name": "s", "verifiers": [], "mcp_servers": [server], "sandbox": {"network": True}}
        scenario = tmp_path / "scenario.json"
        scenario.write_text(json.dumps(doc))
        done = run_cli("mcp", str(scenario), "--project", str(tmp_path), "--json")
    assert "reached the listener" in json.loads(done.out)[0]["result"]
