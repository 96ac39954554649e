"""The MCP client against servers that misbehave (`hostile_mcp_server.py`, over stdio and HTTP)
and users who make mistakes: each failure is one clear line, nothing waits forever, memory and
logs stay bounded, no process outlives its session, and what a server says is never shown raw."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentlens.cli._app import console
from agentlens.demo.tiny_repo import DEMO_SCENARIO, create_repo
from agentlens.scenarios.agents._mcp_tools import DESCRIPTION_CHARS, PROMPT_CHARS, McpTools
from agentlens.scenarios.mcp_client import McpError, McpSession, limits, one_line, open_session
from agentlens.scenarios.workspace import changes_since_base, prepare
from agentlens.verification import disk_guard, isolation, memory_group, repo_git
from tests.cli.conftest import Run
from tests.scenarios.conftest import host_pids, session_marker
from tests.scenarios.hostile_mcp_server import HostileHttp
from tests.secret_at_cut import INTO, KEY, LEAD, kept_part_of_key, key_at_head_cut, real_text

HOSTILE = Path(__file__).with_name("hostile_mcp_server.py")
LIMIT = 1024 * 1024


def hostile(mode: str, *args: str, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(HOSTILE), mode, *args], **extra}


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    """Limits a test can wait for (a real server gets a minute)."""
    monkeypatch.setattr(limits, "TIMEOUT_S", 5.0)
    monkeypatch.setattr(limits, "MESSAGE_LIMIT", LIMIT)


@pytest.fixture
def patient(monkeypatch: pytest.MonkeyPatch) -> None:
    """A real server's minute to answer, for a test whose server ends without a clock: on a
    loaded host (CI beside a model server) filling a gigabyte, or the disk, took over 5 s."""
    monkeypatch.setattr(limits, "TIMEOUT_S", 60.0)


def session_of(
    spec: dict[str, Any], tmp_path: Path, *calls: tuple[str, dict[str, Any]]
) -> tuple[McpSession, list[tuple[str, bool]]]:
    """The session, started, its `calls` made, closed (within 20 s whatever the server does);
    the server may write in `tmp_path / "w"` only."""

    async def go() -> tuple[McpSession, list[tuple[str, bool]]]:
        session = open_session("h", spec, log=tmp_path / "h.log", writable=writable(tmp_path))
        try:
            await session.start()
            return session, [await session.call(tool, arguments) for tool, arguments in calls]
        finally:
            await session.close()

    async def bounded() -> tuple[McpSession, list[tuple[str, bool]]]:
        return await asyncio.wait_for(go(), max(20, 2 * limits.TIMEOUT_S))

    return asyncio.run(bounded())


def refusal(spec: dict[str, Any], tmp_path: Path, *calls: tuple[str, dict[str, Any]]) -> str:
    """The one-line error of a server that fails."""
    with pytest.raises(McpError) as info:
        session_of(spec, tmp_path, *calls)
    message = str(info.value)
    assert message.isprintable() and len(message) < 800, repr(message)
    return message


# --- stdio ---------------------------------------------------------------------------------------


def test_a_server_that_exits_at_once_says_its_exit_code(tmp_path: Path) -> None:
    assert refusal(hostile("exit"), tmp_path) == (
        "MCP server 'h' exited (exit code 3) during initialize"
    )


@pytest.mark.usefixtures("patient")
def test_a_server_filling_the_disk_is_stopped(tmp_path: Path) -> None:
    """`file_size_mb` caps each file, not their number: a server wrote into the workspace until
    the host's disk was full, as verifier commands and the agent's shell did before their guard."""
    folder = writable(tmp_path)[0]
    free_mb = shutil.disk_usage(folder).free // (1024 * 1024)
    floor = isolation.Isolation(limits=isolation.Limits(disk_free_mb=free_mb - 300))
    with isolation.policy(floor):
        message = refusal(hostile("fill-disk", str(folder)), tmp_path)
    assert message.startswith("MCP server 'h' was stopped: under "), message
    assert "left free on the disk it writes to (sandbox disk_free_mb)" in message


@pytest.mark.usefixtures("memory_cgroup", "patient")
def test_a_server_whose_processes_together_pass_memory_mb_is_stopped(tmp_path: Path) -> None:
    """`memory_mb` bounded each process: a server and three helpers held 900 MB each under
    1024 (`verification/memory_group.py`)."""
    with isolation.policy(isolation.Isolation(limits=isolation.Limits(memory_mb=1024))):
        message = refusal(hostile("eat-memory", "900"), tmp_path)
    assert message.startswith(
        "MCP server 'h' was stopped: memory limit 1024 MB (sandbox memory_mb, all its processes)"
        " during initialize"
    ), message


@pytest.mark.usefixtures("memory_cgroup", "patient")
def test_a_server_that_answers_after_losing_a_helper_to_memory_mb_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under cgroup v1 the kernel kills one process of the group, not all: the server, its
    helper gone, answered before the guard's next look (a loaded host) and was used."""
    monkeypatch.setattr(disk_guard, "POLL_S", 3600.0)  # the guard never looks in time
    with isolation.policy(isolation.Isolation(limits=isolation.Limits(memory_mb=1024))):
        message = refusal(hostile("helpers-eat-memory", "700"), tmp_path)
    assert message.startswith(
        "MCP server 'h' was stopped: memory limit 1024 MB (sandbox memory_mb, all its processes)"
        " during initialize"
    ), message


@pytest.mark.usefixtures("memory_cgroup")
def test_a_server_whose_launcher_cannot_enter_its_memory_group_is_not_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Failure injection: the launcher's write into the group fails (its exit 125), which
    read as the server's own exit code."""
    monkeypatch.setattr(memory_group, "ENTER", "exit 125")
    message = refusal(hostile("exit-stderr"), tmp_path)
    assert message.startswith("MCP server 'h' was not started: cannot enter memory group /")
    assert "during initialize" in message, message


def test_removing_a_servers_memory_group_does_not_block_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Failure injection: a group whose removal takes 2 s (`_remove` waits up to 5 s for its
    processes to go). `close` ran it on the event loop, stalling every other session. (A loaded
    host stalls the loop too, under 0.1 s as the server starts: 1 s lies between.)"""
    remove = memory_group.MemoryGroup.remove
    monkeypatch.setattr(memory_group.MemoryGroup, "remove", lambda g: (time.sleep(2), remove(g)))
    gaps = [0.0]

    async def tick() -> None:
        while True:
            last = time.monotonic()
            await asyncio.sleep(0.05)
            gaps.append(time.monotonic() - last)

    async def go() -> None:
        ticker = asyncio.ensure_future(tick())
        session = open_session("h", hostile("exit"), log=tmp_path / "h.log")
        try:
            with pytest.raises(McpError):
                await session.start()
        finally:
            await session.close()
            await asyncio.sleep(0.1)  # the ticker's turn after a stall in `close`
            ticker.cancel()

    asyncio.run(go())
    assert max(gaps) < 1.0, max(gaps)


def test_a_server_naming_a_filter_mid_listing_hides_no_edit_from_the_simulator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The simulated user's diff between turns is a listing of several git calls, and the
    config was looked at once, before them: the agent's live server named a clean filter
    (printing the file's base text) in `.git/config` right after that look, git ran it for
    `add -A`, and the edited `calc/ops.py` was no change. Each call now reads the config as
    the look read it."""
    workspace = prepare(create_repo(tmp_path / "calc"), tmp_path / "ws")
    ops = workspace.path / "calc" / "ops.py"
    (workspace.path / ".git" / "base-ops.py").write_bytes(ops.read_bytes())
    (workspace.path / ".gitattributes").write_text("calc/ops.py filter=hide\n")
    ops.write_text(ops.read_text().replace("a + b", "a - b") + "# edited by the agent\n")
    git_dir = workspace.path / ".git"
    look = repo_git._run_git

    def looked(repo: Path, args: list[str], *rest: Any) -> repo_git.GitResult:
        said = look(repo, args, *rest)
        if "config" in args and not (git_dir / "raced").exists():  # the server writes now
            (git_dir / "race").write_text("")
            deadline = time.monotonic() + 20
            while not (git_dir / "raced").exists() and time.monotonic() < deadline:
                time.sleep(0.01)
        return said

    monkeypatch.setattr(repo_git, "_run_git", looked)

    async def diff_beside_the_server() -> tuple[str, list[str]]:
        spec = hostile("config-racer", str(workspace.path))
        session = open_session("h", spec, log=tmp_path / "h.log", writable=[workspace.path])
        try:
            await session.start()
            return changes_since_base(workspace)
        finally:
            await session.close()

    diff, names = asyncio.run(diff_beside_the_server())
    assert (git_dir / "raced").exists()  # the server did name the filter mid-listing
    assert "filter" in (git_dir / "config").read_text()
    assert "calc/ops.py" in names and "# edited by the agent" in diff, names


def test_its_stderr_ends_the_message_on_one_line_without_escapes(tmp_path: Path) -> None:
    message = refusal(hostile("exit-stderr"), tmp_path)  # ANSI, bytes not UTF-8, 2,000 more
    assert message.startswith("MCP server 'h' exited (exit code 1) during initialize: …zzz")
    assert message.endswith("zzz red \ufffd\ufffd not utf-8 last words")
    assert "first line" in (tmp_path / "h.log").read_text(errors="replace")  # the log has all


def test_a_secret_the_stderr_cut_falls_in_keeps_no_part_of_itself(tmp_path: Path) -> None:
    """The error keeps the last `STDERR_TAIL` characters of a server's stderr (a run's
    termination reason, stored): a key the cut fell in kept all but its `sk-proj-Xy`."""
    flat = one_line(real_text(5000), 5000)
    said = writable(tmp_path)[0] / "stderr.txt"  # where the sandboxed server may read
    said.write_text(f"{flat}{LEAD}{KEY} {flat[: limits.STDERR_TAIL - 2 - len(KEY) + INTO]}")
    message = refusal(hostile("stderr-file", str(said)), tmp_path)
    assert "[REDACTED:openai-key]" in message and kept_part_of_key(message) == []


def test_a_server_that_never_answers_times_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "TIMEOUT_S", 0.5)
    start = time.monotonic()
    assert refusal(hostile("silent"), tmp_path) == (
        "MCP server 'h' did not answer initialize in 0.5s"
    )
    assert time.monotonic() - start < 4


def test_a_server_that_logs_to_stdout_is_told_apart_when_it_times_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "TIMEOUT_S", 3.0)  # its lines come once it has started
    assert refusal(hostile("logs-to-stdout"), tmp_path) == (
        "MCP server 'h' did not answer initialize in 3s (2 lines on its stdout were not "
        "JSON-RPC messages, the last: 'Server listening on stdio')"
    )


def test_messages_that_come_in_pieces_are_read_whole(tmp_path: Path) -> None:
    session, [(text, failed)] = session_of(
        hostile("dribble"), tmp_path, ("echo", {"text": "in pieces"})
    )
    assert [tool["name"] for tool in session.tools] == ["echo"]
    assert (text, failed) == ("in pieces", False)


def test_lines_it_floods_stdout_with_while_unread_wait_in_the_pipe_not_in_memory(
    tmp_path: Path,
) -> None:
    async def go() -> tuple[int, tuple[str, bool]]:
        session = open_session("h", hostile("flood", str(6 * LIMIT)), log=tmp_path / "h.log")
        try:
            await session.start()
            await asyncio.sleep(1)  # the agent thinks; the server writes 6 MB of log lines
            held = len(session._pipes._lines)  # type: ignore[attr-defined]
            return held, await session.call("echo", {"text": "still here"})
        finally:
            await session.close()

    held, result = asyncio.run(asyncio.wait_for(go(), 20))
    assert held <= 2 * LIMIT + 256 * 1024  # at most one more chunk than the pause point
    assert result == ("still here", False)


def test_lines_that_are_not_json_rpc_messages_are_skipped(tmp_path: Path) -> None:
    session, _ = session_of(hostile("garbage"), tmp_path)
    assert [tool["name"] for tool in session.tools] == ["echo"]


@pytest.mark.parametrize(
    ("mode", "what"),
    [
        ("result-list", "with a list for a result"),
        ("result-string", "with a string for a result"),
        ("result-null", "without a result"),
        ("result-missing", "without a result"),
    ],
)
def test_a_result_that_is_not_an_object_is_refused(tmp_path: Path, mode: str, what: str) -> None:
    assert refusal(hostile(mode), tmp_path) == (
        f"MCP server 'h' answered initialize {what} (not an object)"
    )


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("error-string", "it broke"),
        ("error-number", "42"),
        ("error-nested", '{"message":{"deep":[1]}}'),
    ],
)
def test_an_error_of_any_shape_is_said(tmp_path: Path, mode: str, said: str) -> None:
    assert refusal(hostile(mode), tmp_path) == f"MCP server 'h' initialize failed: {said}"


def test_a_huge_error_message_is_one_short_line(tmp_path: Path) -> None:
    message = refusal(hostile("error-huge"), tmp_path)  # a line break, ANSI, 100,000 x
    assert message.startswith("MCP server 'h' initialize failed: boom xxx")
    assert message.endswith("x…") and len(message) < 400


def test_a_null_error_beside_a_result_is_no_error(tmp_path: Path) -> None:
    session, _ = session_of(hostile("error-null"), tmp_path)
    assert [tool["name"] for tool in session.tools] == ["echo"]


@pytest.mark.parametrize("mode", ["huge-line", "endless-line"])
def test_a_message_beyond_the_limit_is_refused_and_the_session_still_closes(
    tmp_path: Path, mode: str
) -> None:
    start = time.monotonic()  # the endless one used to leave `close` waiting forever
    message = refusal(hostile(mode, str(5 * LIMIT)), tmp_path)
    assert message == f"MCP server 'h' sent a message longer than {LIMIT} bytes during initialize"
    assert time.monotonic() - start < 10


def test_tools_without_a_usable_name_are_left_out_and_the_rest_kept_small(tmp_path: Path) -> None:
    session, _ = session_of(hostile("odd-tools"), tmp_path)
    assert [tool["name"] for tool in session.tools] == ["echo", "[red]markup[/red]"]
    assert session.left_out == 9  # no name, not a string, empty, a line break, an escape...
    schema = session.tools[1]["inputSchema"]  # 500 kB: what the model is shown instead
    assert schema == {"type": "object", "description": "(its schema: 500034 characters)"}


def test_a_thousand_tools_are_kept_at_most(tmp_path: Path) -> None:
    session, _ = session_of(hostile("many-tools"), tmp_path)
    assert len(session.tools) == 1000 and session.left_out == 4000


def test_a_cursor_given_twice_ends_the_list(tmp_path: Path) -> None:
    session, _ = session_of(hostile("cursor-loop"), tmp_path)
    assert [tool["name"] for tool in session.tools] == ["echo_1", "echo_2"]


def test_tools_that_are_not_a_list_are_refused(tmp_path: Path) -> None:
    assert refusal(hostile("tools-not-a-list"), tmp_path) == (
        "MCP server 'h' answered tools/list with tools that are an object"
    )


def test_content_parts_of_odd_shapes_and_an_is_error_that_is_not_true(tmp_path: Path) -> None:
    _, [(text, failed)] = session_of(hostile("odd-call"), tmp_path, ("echo", {"text": "hi"}))
    assert text.split("\n") == ['hi', '{"not":"text"}', "[image omitted]", "[content omitted]",
                                "[resource omitted]", "[resource omitted]"]  # fmt: skip
    assert failed is False  # "isError": "false"
    _, [(_, failed)] = session_of(hostile("call-error"), tmp_path, ("echo", {}))
    assert failed is True


def test_a_huge_tool_result_is_cut_and_a_deep_one_does_not_break_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "OUTPUT_LIMIT", 1000)
    _, [(text, _)] = session_of(hostile("huge-call", "5000"), tmp_path, ("echo", {}))
    assert text == "y" * 1000 + "\n[... 4000 more characters of output not kept]"
    _, [(text, _)] = session_of(hostile("deep-call"), tmp_path, ("echo", {}))
    assert text == "(too deeply nested to show)"


def test_requests_from_the_server_are_answered_ping_too(tmp_path: Path) -> None:
    session, _ = session_of(hostile("requests"), tmp_path)  # interleaved with notifications
    seen = [json.loads(line) for line in session.tools[0]["description"].split("\n")]
    answers = {message["id"]: message.get("result", message.get("error")) for message in seen}
    not_found = {"code": -32601, "message": "method not found"}
    assert answers == {"s1": {}, "s2": not_found, 1: not_found}


def writable(tmp_path: Path) -> list[Path]:
    (tmp_path / "w").mkdir(exist_ok=True)
    return [tmp_path / "w"]


def note_in(tmp_path: Path) -> Path:
    """Where a sandboxed server notes a pid (of its PID namespace): a name unique on this host,
    which its processes carry on their command lines."""
    return writable(tmp_path)[0] / Path(session_marker()).name


def gone(note: Path) -> bool:
    """It was written, and no host process naming it is left (within 30 s: each lives 300 s or
    more unless killed)."""
    assert note.read_text().strip().isdigit()
    deadline = time.monotonic() + 30
    while host_pids(note.name) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not host_pids(note.name)


def test_what_a_server_left_behind_goes_with_it_once_it_has_exited(tmp_path: Path) -> None:
    note = note_in(tmp_path)

    async def go() -> None:
        session = open_session(
            "h", hostile("grandchild", str(note)), log=tmp_path / "h.log", writable=[note.parent]
        )
        with pytest.raises(McpError, match="exited"):
            await session.start()
        await asyncio.sleep(0.3)  # its exit seen: `close` used to stop there
        await session.close()

    asyncio.run(go())
    assert gone(note)


def test_what_a_server_started_goes_with_it_even_holding_its_pipes(tmp_path: Path) -> None:
    note = note_in(tmp_path)
    start = time.monotonic()
    session_of(hostile("grandchild-pipes", str(note)), tmp_path)
    assert gone(note) and time.monotonic() - start < 5


def test_a_server_that_ignores_stdin_close_and_sigterm_is_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "CLOSE_WAIT_S", 0.3)
    note = note_in(tmp_path)
    start = time.monotonic()
    session_of(hostile("stubborn", str(note)), tmp_path)
    assert time.monotonic() - start < 3
    assert gone(note)


def test_its_stderr_log_is_bounded_and_keeps_its_start_and_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "STDERR_LOG_LIMIT", 10_000)
    refusal(hostile("stderr-flood", "1000000"), tmp_path)
    log = (tmp_path / "h.log").read_bytes()
    assert log.startswith(b"e" * 10_000 + b"\n[... ") and len(log) < 15_000
    assert b" bytes of stderr not kept; its end:]\n" in log and log.endswith(b"the end of stderr\n")


def test_what_a_server_was_given_is_blanked_out_of_its_errors(tmp_path: Path) -> None:
    spec = hostile("leak-env", env={"HOSTILE_TOKEN": "s3cret-value"})
    assert refusal(spec, tmp_path) == (
        "MCP server 'h' exited (exit code 1) during initialize: bad token *** refused"
    )
    log = (tmp_path / "h.log").read_bytes()  # kept in the session folder, which is shared
    assert b"s3cret-value" not in log and b"bad token *** refused" in log


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"command": "no-such-mcp-server-here"},
            "No such file or directory: no-such-mcp-server-here",
        ),
        ({"command": "/"}, "Permission denied: /"),
        (hostile("ok", "nul\x00"), "embedded null byte"),
        (hostile("ok", cwd="/no/such/folder"), "its cwd /no/such/folder is not a folder"),
    ],
)
def test_a_server_that_cannot_start_says_why(
    tmp_path: Path, spec: dict[str, Any], message: str
) -> None:
    assert refusal(spec, tmp_path) == f"MCP server 'h' did not start: {message}"


# --- the built-in agent's side -------------------------------------------------------------------


def tools_of(tmp_path: Path, **servers: dict[str, Any]) -> McpTools:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    return McpTools(config, tmp_path / "logs")


def block(server: str, tool: str, arguments: Any) -> str:
    return json.dumps({"server": server, "tool": tool, "arguments": arguments})


def agent_side(tmp_path: Path, servers: dict[str, Any], *blocks: str) -> tuple[str, list[Any]]:
    """The prompt and what each block's call gave, the servers closed after."""
    tools = tools_of(tmp_path, **servers)

    async def go() -> tuple[str, list[Any]]:
        try:
            await tools.start(tmp_path)
            return tools.prompt(), [await tools.call(text) for text in blocks]
        finally:
            await tools.close()

    return asyncio.run(asyncio.wait_for(go(), 20))


def test_the_agent_can_call_a_server_whose_tools_have_odd_names(tmp_path: Path) -> None:
    prompt, [unknown, markup] = agent_side(
        tmp_path,
        {"h": hostile("odd-tools")},
        block("h", "7", {}),  # a name the server gave as a number
        block("h", "[red]markup[/red]", {"text": "hi"}),
    )
    assert unknown[3:] == ("No tool '7' on a server 'h'.", True)
    assert markup[3:] == ("hi", False)
    assert "\x1b" not in prompt and "\x07" not in prompt and "\r" not in prompt
    assert "- h/[red]markup[/red]: red [bold]bold[/bold] over" in prompt


def test_a_thousand_tools_do_not_swell_the_prompt(tmp_path: Path) -> None:
    prompt, _ = agent_side(tmp_path, {"h": hostile("many-tools")})
    assert len(prompt) < PROMPT_CHARS + 1000
    assert prompt.rstrip().endswith("more tools are not listed: there is no room for them)")


def test_a_schema_too_deep_to_write_does_not_break_the_prompt(tmp_path: Path) -> None:
    prompt, _ = agent_side(tmp_path, {"h": hostile("deep-schema")})
    assert "- h/echo: Echo the text. arguments: " in prompt and "too deeply nested" in prompt


def test_a_call_the_server_fails_is_an_error_the_model_sees_without_its_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "TIMEOUT_S", 1.0)
    _, [silent, crashed, bad, deep] = agent_side(
        tmp_path,
        {"silent": hostile("call-silent"), "crash": hostile("call-exit")},
        block("silent", "echo", {}),
        block("crash", "echo", {}),
        block("crash", "echo", "not an object"),
        block("silent", "echo", {"x": json.loads("[" * 300 + "]" * 300)}),
    )
    assert silent[3:] == (
        "The call failed: MCP server 'silent' did not answer tools/call in 1s.",
        True,
    )
    assert crashed[3:] == (
        "The call failed: MCP server 'crash' exited (exit code 1) during tools/call.",
        True,
    )  # its stderr ("crashed during the call") is in its log, not before the model
    assert "crashed during the call" in (tmp_path / "logs" / "mcp-crash.log").read_text()
    assert bad[2:] == ({}, "Invalid mcp block: 'arguments' must be a JSON object.", True)
    assert deep[3:] == ("Invalid mcp block: its arguments: Recursion limit reached.", True)


def test_a_secret_the_output_cut_falls_in_keeps_no_part_of_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool's output was cut at `OUTPUT_LIMIT` before anything masked it: a key the cut fell
    in was kept as `sk-proj-Xy`, which the step stores and the model is sent."""
    monkeypatch.setattr(limits, "OUTPUT_LIMIT", 10_000)
    text = key_at_head_cut(10_000)
    _, [(output, _)] = session_of(hostile("plain"), tmp_path, ("echo", {"text": text}))
    assert f"{LEAD}[REDACTED:openai-key]" in output
    assert kept_part_of_key(output) == []


def test_a_secret_a_description_or_an_error_cut_falls_in_reaches_no_prompt(
    tmp_path: Path,
) -> None:
    """A tool's description (cut to 200 characters for the prompt) and a server's error (cut to
    300 for the model) kept the first characters of a key the cut fell in."""
    flat = one_line(real_text(5000), 5000)
    described, refused = tmp_path / "described.txt", tmp_path / "refused.txt"
    described.write_text(f"{flat[: DESCRIPTION_CHARS - 1 - INTO - len(LEAD)]}{LEAD}{KEY} end")
    said = f"{flat[: limits.ERROR_CHARS - 1 - INTO - len(LEAD)]}{LEAD}{KEY} end"
    refused.write_text(said)
    prompt, [call] = agent_side(
        tmp_path,
        {"d": hostile("described", str(described)), "r": hostile("call-refused", str(refused))},
        block("r", "echo", {}),
    )
    assert f"{LEAD}[REDACTED:openai-key]" in prompt and kept_part_of_key(prompt) == []
    assert f"{LEAD}[REDACTED:openai-key]" in call[3] and kept_part_of_key(call[3]) == []


# --- HTTP ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def web() -> Iterator[str]:
    """The hostile HTTP server, in a thread; its base URL (the path names the mode)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), HostileHttp)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_http_answers_that_work(web: str, tmp_path: Path) -> None:
    for mode in ("ok", "text-plain", "stream-ok"):  # JSON, JSON as text/plain, an event stream
        session, [answer] = session_of({"url": f"{web}/{mode}"}, tmp_path, ("echo", {"text": "x"}))
        assert [tool["name"] for tool in session.tools] == ["echo"], mode
        assert answer == ("", False), mode  # it echoes `text` for stdio only


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("error-500", "answered HTTP 500: <html> <body>Internal Server Error</body></html> xxx"),
        (
            "redirect",
            "answered initialize with HTTP 307, a redirect to http://127.0.0.1:9/elsewhere "
            "(not followed: give that url in the scenario)",
        ),
        (
            "html",
            "answered initialize with text/html that is not a JSON-RPC message: "
            "<html>a login page</html> (HTTP 200)",
        ),
        ("empty-202", "answered initialize with no message (HTTP 202)"),
        ("stream-no-answer", "ended its event stream without answering initialize"),
        ("huge-body", f"sent a message longer than {LIMIT} bytes"),
        ("stream-long-line", f"sent a message longer than {LIMIT} bytes"),
        ("stream-many-data", f"sent a message longer than {LIMIT} bytes"),
    ],
)
@pytest.mark.usefixtures("patient")  # a megabyte of event lines from a thread here
def test_http_answers_that_do_not(web: str, tmp_path: Path, mode: str, message: str) -> None:
    assert refusal({"url": f"{web}/{mode}"}, tmp_path).startswith(f"MCP server 'h' {message}")


def test_an_event_stream_that_never_answers_times_out(
    web: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "TIMEOUT_S", 0.5)
    assert refusal({"url": f"{web}/stream-endless"}, tmp_path) == (
        "MCP server 'h' did not answer initialize in 0.5s"
    )


def test_a_slow_session_delete_does_not_hold_close(
    web: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "CLOSE_WAIT_S", 0.3)
    start = time.monotonic()
    session_of({"url": f"{web}/slow-delete"}, tmp_path)
    assert time.monotonic() - start < 3


def test_the_token_is_blanked_out_of_what_the_server_answers(web: str, tmp_path: Path) -> None:
    spec = {"url": f"{web}/echo-auth", "headers": {"Authorization": "Bearer s3cret-value"}}
    assert (
        refusal(spec, tmp_path) == "MCP server 'h' answered HTTP 401: bad credentials: Bearer ***"
    )


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (None, "could not connect to 127.0.0.1:{port}: "),
        ("http://no-such-host.invalid/mcp", "could not connect to no-such-host.invalid: "),
        ("not a url", "has a url that is not http(s): not a url"),
        ("ftp://example.com/mcp", "has a url that is not http(s): ftp://example.com/mcp"),
    ],
)
def test_a_url_that_cannot_be_reached_is_one_line_and_fast(
    tmp_path: Path, url: str | None, message: str
) -> None:
    port = closed_port()
    start = time.monotonic()
    said = refusal({"url": url or f"http://127.0.0.1:{port}/mcp"}, tmp_path)
    assert said.startswith(f"MCP server 'h' {message.format(port=port)}")
    assert time.monotonic() - start < 10


def test_a_header_that_is_not_ascii_is_named_not_shown(tmp_path: Path) -> None:
    spec = {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer tökén"}}
    assert refusal(spec, tmp_path) == (
        "MCP server 'h' has a header 'Authorization' that is not printable ASCII"
    )


# --- `agentlens mcp` -----------------------------------------------------------------------------


def scenario_file(tmp_path: Path, servers: Any) -> Path:
    path = tmp_path / "scenario.json"
    document = {**DEMO_SCENARIO, "max_steps": 1}
    if servers is not None:
        document["mcp_servers"] = servers
    path.write_text(json.dumps(document))
    return path


def test_mcp_check_of_careless_entries_and_a_hostile_server(
    tmp_path: Path, run_cli: Callable[..., Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENTLENS_TEST_UNSET", raising=False)
    monkeypatch.setattr(console, "width", 400)
    servers = [
        {"name": "missing", "command": "no-such-mcp-server-here"},
        {"name": "nowhere", **hostile("ok"), "cwd": str(tmp_path / "nope")},
        {"name": "unset", **hostile("ok", "$AGENTLENS_TEST_UNSET$")},
        {"name": "nul", **hostile("ok", "a\x00b")},
        {"name": "noisy", **hostile("exit-stderr")},
        {"name": "odd", **hostile("odd-tools")},
        {"name": "refused", "url": f"http://127.0.0.1:{closed_port()}/mcp"},
    ]
    path = scenario_file(tmp_path, servers)
    result = run_cli("mcp", str(path), "--json")
    assert result.code == 1 and "Traceback" not in result.err, result.err
    rows = {row["server"]: row for row in json.loads(result.out)}
    assert rows["missing"]["result"] == (
        "MCP server 'missing' did not start: No such file or directory: no-such-mcp-server-here"
    )
    assert rows["nowhere"]["result"].endswith("nope is not a folder")
    assert rows["unset"]["result"] == "not set: $AGENTLENS_TEST_UNSET$"
    assert rows["nul"]["result"] == "MCP server 'nul' did not start: embedded null byte"
    assert rows["noisy"]["result"].endswith("zzz red \ufffd\ufffd not utf-8 last words")
    assert rows["odd"] | {"where": ""} == {
        "scenario": "fix_sub", "server": "odd", "where": "", "result": "ok",
        "tools": ["echo", "[red]markup[/red]"], "left_out": 9,
    }  # fmt: skip
    assert rows["refused"]["result"].startswith("MCP server 'refused' could not connect to")
    table = run_cli("mcp", str(path))
    assert table.code == 1 and "Traceback" not in table.err, table.err
    assert "\x1b" not in table.out and "last words" in table.out
    assert "2: echo, [red]markup[/red] (9 left out: no usable name, or too many)" in table.out


def test_mcp_check_of_a_scenario_without_servers(
    tmp_path: Path, run_cli: Callable[..., Run]
) -> None:
    result = run_cli("mcp", str(scenario_file(tmp_path, None)))
    assert (result.code, result.out.strip()) == (0, "no MCP servers in these scenarios")
