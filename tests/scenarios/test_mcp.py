"""MCP servers a scenario gives its agent (spec §2.3 `mcp_servers[]`): filled with the environment
and the workspace, handed over as a private config file that is gone after the attempt, refused up
front when the agent cannot take them or a placeholder is unset. The server is the real
`mcp-server-git`, started by a real agent process that speaks MCP to it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentlens.demo.tiny_repo import DEMO_SCENARIO
from agentlens.errors import ConfigError
from agentlens.providers.types import ChatResponse
from agentlens.scenarios.scenario import Scenario, load_scenario
from tests.cli.conftest import Run
from tests.llm import free_port
from tests.scenarios.conftest import INSTRUCTION, scripted
from tests.scenarios.helpers import fold_run

GIT_SERVER = shutil.which("mcp-server-git")
needs_server = pytest.mark.skipif(  # on CI a missing server fails the test instead
    GIT_SERVER is None and not os.environ.get("CI"), reason="needs mcp-server-git (dev extra)"
)
TOKEN = "AGENTLENS_TEST_MCP_TOKEN"
SECRET = "s3cret-token-value"


def git_server(**extra: Any) -> dict[str, Any]:
    return {
        "name": "git",
        "command": GIT_SERVER or "mcp-server-git",
        "args": ["--repository", "{workdir}"],
        "env": {"GIT_TOKEN": f"${TOKEN}$"},
        **extra,
    }


def scenario_file(tmp_path: Path, servers: Any) -> Path:
    path = tmp_path / "scenario.json"
    document = {**DEMO_SCENARIO, "max_steps": 1, "user_instruction": INSTRUCTION}
    path.write_text(json.dumps({**document, "mcp_servers": servers}))
    return path


@pytest.fixture
def mcp_scenario(tmp_path: Path) -> Scenario:
    return load_scenario(scenario_file(tmp_path, [git_server()]))


@needs_server
def test_the_agent_gets_the_servers_filled_in_and_the_secret_file_is_gone(
    mcp_scenario: Scenario, calc_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN, SECRET)
    out = tmp_path / "out"
    result = fold_run(
        mcp_scenario, calc_project, out, scripted("mcp", "{mcp_config}"), [ChatResponse(text="Go.")]
    )
    (session,) = result.sessions
    assert not session.failed, session.termination.reason
    seen = json.loads(next(s.text for s in session.trajectory.steps if s.kind == "agent"))
    git = seen["servers"]["git"]
    assert {"git_status", "git_diff", "git_log"} <= set(git["tools"])  # the real server's tools
    assert "On branch" in git["status"] and "nothing to commit" in git["status"]
    assert git["env"] == [["GIT_TOKEN", hashlib.sha256(SECRET.encode()).hexdigest()]]
    assert seen["mode"] == "0o600"
    assert not Path(seen["path"]).exists() and not Path(seen["path"]).parent.exists()
    assert session.trajectory.metadata["mcp_servers"] == ["git"]
    stored = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
    assert SECRET.encode() not in stored  # the token stays out of everything the run keeps


def test_an_unset_placeholder_is_refused_before_any_run(
    mcp_scenario: Scenario, calc_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TOKEN, raising=False)
    with pytest.raises(ConfigError) as info:
        fold_run(mcp_scenario, calc_project, tmp_path / "out", scripted("mcp", "{mcp_config}"), [])
    assert f"git: ${TOKEN}$" in str(info.value)
    assert not (tmp_path / "out").exists()


def test_an_agent_that_cannot_take_them_is_refused_unless_told_to_ignore(
    mcp_scenario: Scenario,
    calc_project: Path,
    tmp_path: Path,
    run_cli: Callable[..., Run],
) -> None:
    with pytest.raises(ConfigError, match=r"--mcp-config \{mcp_config\}.*--ignore-mcp"):
        fold_run(mcp_scenario, calc_project, tmp_path / "a", scripted("fix"), [])
    argv = ["run", str(tmp_path / "scenario.json"), "--project", str(calc_project),
            "--agent", scripted("fix"), "--simulator", "openai-compatible:http://127.0.0.1:9/v1#m",
            "--out", str(tmp_path / "b")]  # fmt: skip
    refused = run_cli(*argv)
    notice, error = [line for line in refused.err.splitlines() if line.strip()]
    assert refused.code == 2 and "Traceback" not in refused.err
    assert notice.startswith("scenario fix_sub: MCP server git (") and notice.endswith(
        f"gets ${TOKEN}$"
    )  # which of your variables it would receive, said before anything runs
    assert "gives its agent MCP servers (git)" in error

    go = [ChatResponse(text="Go.")]
    ignoring = fold_run(
        mcp_scenario, calc_project, tmp_path / "c", scripted("fix"), go, ignore_mcp=True
    )
    (session,) = ignoring.sessions
    assert session.verification is not None and session.verification.passed
    assert session.trajectory.metadata["mcp_servers_ignored"] == ["git"]
    assert "mcp_servers" not in session.trajectory.metadata


@pytest.mark.parametrize(
    ("servers", "message"),
    [
        ({"name": "git"}, "mcp_servers must be a list"),
        (["git"], r"mcp_servers\[1\] must be an object"),
        ([{"command": "x"}], r"mcp_servers\[1\]: 'name' must be"),
        ([{"name": "a b", "command": "x"}], r"'name' must be letters"),
        ([{"name": "git"}], "needs either a 'command'"),
        ([{"name": "git", "command": "x", "url": "http://h"}], "needs either a 'command'"),
        ([{"name": "git", "command": "x", "arg": ["y"]}], "key 'arg' is not one of"),
        ([{"name": "git", "command": "x", "args": "y"}], "'args' must be a list"),
        ([{"name": "git", "command": "x", "args": [1]}], "every value of 'args'"),
        ([{"name": "git", "command": "x", "env": {"A": 1}}], "every value of 'env'"),
        ([{"name": "gh", "url": "http://h", "type": "ws"}], "'type' must be http or sse"),
        ([git_server(), git_server()], "server name 'git' is given twice"),
    ],
)
def test_a_bad_server_entry_names_the_file_and_the_entry(
    tmp_path: Path, servers: Any, message: str
) -> None:
    path = scenario_file(tmp_path, servers)
    with pytest.raises(ConfigError, match=message) as info:
        load_scenario(path)
    assert str(info.value).startswith(f"{path}: ")


def test_a_remote_server_and_its_headers_are_filled_in(tmp_path: Path) -> None:
    from agentlens.scenarios.mcp import filled, mcp_config, missing_variables

    github = {"name": "github", "url": "https://api.example/mcp", "type": "http",
              "headers": {"Authorization": "Bearer $GH$"}}  # fmt: skip
    (server,) = load_scenario(scenario_file(tmp_path, [github])).mcp_servers
    assert missing_variables([server], {}) == ["github: $GH$"]
    document = filled([server], tmp_path, {"GH": "t0k"})
    assert document == {"mcpServers": {"github": {
        "url": "https://api.example/mcp", "type": "http", "headers": {"Authorization": "Bearer t0k"},
    }}}  # fmt: skip
    with mcp_config([server], tmp_path, {"GH": "t0k"}) as path:
        assert json.loads(path.read_text()) == document
    assert not path.exists()
    with mcp_config([], tmp_path) as path:  # an agent that takes a config always gets a file
        assert json.loads(path.read_text()) == {"mcpServers": {}}


class ScriptedBuiltIn:
    """The built-in agent, its model's replies scripted (a real model does not call a given
    tool on demand); its MCP servers are real."""

    takes_mcp = True
    own_mcp_client = True

    def __init__(self, replies: list[str]) -> None:
        self.replies = replies
        self.agents: list[Any] = []

    def __call__(self, folder: Path, mcp_config: Path | None = None) -> Any:
        from agentlens.providers import LLMClient
        from agentlens.providers.retry import RetryPolicy
        from agentlens.scenarios.agents import BashAgent
        from agentlens.scenarios.agents._mcp_tools import McpTools
        from tests.scenarios.helpers import Scripted

        answers = [ChatResponse(text=reply.format(config=mcp_config)) for reply in self.replies]
        client = LLMClient(Scripted(answers), retry=RetryPolicy(max_attempts=1))
        tools = McpTools(mcp_config, folder) if mcp_config is not None else None
        self.agents.append(BashAgent(client, mcp=tools))
        return self.agents[-1]


def mcp_block(server: str, tool: str, arguments: Any) -> str:
    call = json.dumps({"server": server, "tool": tool, "arguments": arguments})
    return f"THOUGHT: look.\n\n```mcp\n{call}\n```".replace("{", "{{").replace("}", "}}")


@needs_server
def test_the_built_in_agent_calls_the_tools_and_its_shell_never_sees_the_token(
    mcp_scenario: Scenario, calc_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:

    monkeypatch.setenv(TOKEN, SECRET)
    agent = ScriptedBuiltIn([
        "```bash\necho '# changed' >> calc/ops.py; cat {config}; env | grep -c AGENTLENS_TEST_MCP\n```",
        mcp_block("git", "git_status", {"repo_path": "."}),
        mcp_block("git", "no_such_tool", {}),
        "THOUGHT: broken.\n\n```mcp\nnot json\n```",
        "The repository has one change.",
    ])  # fmt: skip
    go = [ChatResponse(text="Go.")]
    (session,) = fold_run(mcp_scenario, calc_project, tmp_path / "out", agent, go).sessions
    tools = [s for s in session.trajectory.steps if s.kind == "tool"]
    shell, status, unknown, broken = tools
    assert status.tool_name == "mcp__git__git_status" and status.is_error is False
    assert "modified:" in (status.observation or "") and "calc/ops.py" in (status.observation or "")
    assert status.arguments == {"repo_path": "."}  # the server ran in the workspace
    assert "No such file" in (shell.observation or "") and "\n0\n" in (shell.observation or "")
    assert SECRET not in (shell.observation or "")  # neither the config file nor the env
    assert unknown.is_error and unknown.observation == "No tool 'no_such_tool' on a server 'git'."
    assert broken.is_error and (broken.observation or "").startswith("Invalid mcp block")
    prompt = agent.agents[0].messages[0]["content"]
    assert "- git/git_status:" in prompt and "```mcp" in prompt
    (server,) = agent.agents[0].mcp.sessions.values()
    assert server._pipes is None  # stopped with the agent


HTTP_SERVER = Path(__file__).with_name("mcp_http_server.py")


@pytest.fixture
def remote(tmp_path: Path) -> Any:
    """The MCP SDK's own server over streamable HTTP, wanting `Bearer SECRET`; its URL."""
    import socket
    import subprocess
    import sys
    import time

    port = free_port()
    log = (tmp_path / "http-server.log").open("wb")
    server = subprocess.Popen(
        [sys.executable, str(HTTP_SERVER), str(port), SECRET], stdout=log, stderr=log
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                break
        assert server.poll() is None, (tmp_path / "http-server.log").read_text()
        time.sleep(0.1)
    yield f"http://127.0.0.1:{port}/mcp"
    server.terminate()
    server.wait(timeout=10)
    log.close()


def shouter(url: str, token: str = f"${TOKEN}$") -> dict[str, Any]:
    return {"name": "shouter", "url": url, "headers": {"Authorization": f"Bearer {token}"}}


@needs_server  # the `mcp` SDK it brings runs the remote server
def test_the_built_in_agent_reaches_a_remote_server_with_its_token(
    remote: str, calc_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:

    monkeypatch.setenv(TOKEN, SECRET)
    scenario = load_scenario(scenario_file(tmp_path, [shouter(remote)]))
    agent = ScriptedBuiltIn([mcp_block("shouter", "shout", {"text": "quiet"}), "Shouted."])
    go = [ChatResponse(text="Go.")]
    (session,) = fold_run(scenario, calc_project, tmp_path / "out", agent, go).sessions
    (call,) = [s for s in session.trajectory.steps if s.kind == "tool"]
    assert (call.tool_name, call.observation, call.is_error) == (
        "mcp__shouter__shout",
        "QUIET",
        False,
    )
    assert "- shouter/shout: Upper-case the text." in agent.agents[0].messages[0]["content"]


@needs_server
def test_mcp_check_starts_each_server_and_says_what_fails(
    remote: str,
    calc_project: Path,
    tmp_path: Path,
    run_cli: Callable[..., Run],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(TOKEN, SECRET)
    servers = [
        git_server(),
        shouter(remote),
        {**shouter(remote, "wrong"), "name": "refused"},
        {**shouter(remote, "$AGENTLENS_TEST_UNSET$"), "name": "unset"},
    ]
    monkeypatch.delenv("AGENTLENS_TEST_UNSET", raising=False)
    result = run_cli(
        "mcp", str(scenario_file(tmp_path, servers)), "--project", str(calc_project), "--json"
    )
    assert result.code == 1, result.err
    rows = {row["server"]: row for row in json.loads(result.out)}
    assert rows["git"]["result"] == "ok" and "git_status" in rows["git"]["tools"]
    assert rows["shouter"]["result"] == "ok" and rows["shouter"]["tools"] == ["shout"]
    assert (
        rows["refused"]["result"]
        == "MCP server 'refused' answered HTTP 401: a bearer token is needed"
    )
    assert rows["unset"]["result"] == "not set: $AGENTLENS_TEST_UNSET$"
    table = run_cli(
        "mcp", str(scenario_file(tmp_path, [git_server()])), "--project", str(calc_project)
    )
    assert table.code == 0 and "git_status" in table.out


def test_the_built_in_agent_refuses_the_legacy_sse_transport_up_front(
    tmp_path: Path, calc_project: Path
) -> None:
    legacy = {"name": "old", "url": "http://127.0.0.1:9/sse", "type": "sse"}
    scenario = load_scenario(scenario_file(tmp_path, [legacy]))
    model = "bash:openai-compatible:http://127.0.0.1:9/v1#m"
    with pytest.raises(ConfigError, match="cannot reach old: type sse is the older HTTP"):
        fold_run(scenario, calc_project, tmp_path / "o", model, [])


@needs_server
def test_the_agents_servers_are_stopped_before_its_work_is_checked(
    mcp_scenario: Scenario, calc_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stdio server stayed up through the final checks, free to rewrite the workspace or its
    git config between two of their git calls (found by an attack on the sandbox)."""
    from agentlens.scenarios import session as session_module

    monkeypatch.setenv(TOKEN, SECRET)
    agent = ScriptedBuiltIn([mcp_block("git", "git_status", {"repo_path": "."}), "Done."])
    running_at_check: list[bool] = []
    check = session_module._verify

    async def spying(*args: Any) -> Any:
        servers = agent.agents[0].mcp.sessions.values()
        running_at_check.extend(server._pipes is not None for server in servers)
        return await check(*args)

    monkeypatch.setattr(session_module, "_verify", spying)
    go = [ChatResponse(text="Go.")]
    (session,) = fold_run(mcp_scenario, calc_project, tmp_path / "out", agent, go).sessions
    assert session.verification is not None, session.termination.reason
    assert running_at_check == [False]  # one server, up during the dialog, down for the checks
    assert any(s.tool_name == "mcp__git__git_status" for s in session.trajectory.steps)
