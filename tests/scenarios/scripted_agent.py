"""A real agent CLI for the scenario tests: a process that changes the workspace and prints a
`codex exec --json` stream, as Codex would. Usage: scripted_agent.py MODE MESSAGE TURN [ARG]

fix      turn 1 fixes calc.sub with sed and appends a test; later turns only answer
sleep    writes its pid to ARG, then sleeps (turn and scenario timeouts)
crash    exits 3 with a message on stderr (agent failure)
mini     fixes calc.sub and writes a mini-swe-agent-1 `traj.json` to ARG (the `{trace}` file)
silent   a stream with no items (the agent did nothing)
orphan   starts a background job that writes ARG.late 300 s later, writes ARG, answers, exits
holdpipe a `setsid` grandchild keeps stdout open for 30 s, then it sleeps (turn timeout)
breakgit removes the workspace's .git, then answers
deep     fixes calc.sub, then writes calc/d/d/…/x.py 1,500 folders deep, with an undefined name
fifo     fixes calc.sub, then leaves a FIFO no one writes to as .git/info/exclude, and answers
partial  prints a command and a message, then sleeps (its turn times out)
garbage  prints text that is no trace format
claude   as fix, printed as `claude -p --output-format stream-json --verbose` does ($0.25 a turn)
mcp      reads the MCP config at ARG ({mcp_config}), starts each stdio server there as an MCP
         client would (initialize, tools/list, then `git_status` on the workspace) and reports
         the tools, the status and what it saw of the config (its mode, the servers' env hashed)
killhost kills the process that started it (the Ray worker running its pair), then exits
ideerr   turn 1 writes calc/extra.py with 7 undefined names, one more in calc/ops.py, a note.md
         and a symlink calc/outside.py to ARG (a file outside the project); turn 2 fixes ops.py
plant    as fix, and turn 1 leaves links to ARG (a host file) where AgentLens writes next in its
         session folder: the next turn's trace, trajectory.jsonl, verify.json, .passwd
swap     changes nothing, but replaces its workspace folder with a link to ARG (a host folder)
"""

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

SED = "sed -i 's/return a + b  # bug: should subtract/return a - b/' calc/ops.py"
NEW_TEST = "\n\ndef test_sub_negative():\n    assert sub(2, 3) == -1\n"


def emit(event: dict) -> None:
    print(json.dumps(event), flush=True)


def item(number: int, **fields: object) -> None:
    emit({"type": "item.completed", "item": {"id": f"item_{number}", **fields}})


def fix(turn: int) -> None:
    time.sleep(float(os.environ.get("AGENTLENS_SCRIPTED_DELAY", "0")))  # a real agent's think time
    if turn == 1:
        done = subprocess.run(["bash", "-c", SED], capture_output=True, text=True)
        item(
            0,
            type="command_execution",
            command=f"bash -lc {json.dumps(SED)}",
            aggregated_output=done.stdout,
            exit_code=done.returncode,
            status="completed",
        )
        with open("tests/test_ops.py", "a") as handle:
            handle.write(NEW_TEST)
        item(
            1,
            type="file_change",
            changes=[{"path": "tests/test_ops.py", "kind": "update"}],
            status="completed",
        )
        item(2, type="agent_message", text="Fixed sub() and added a regression test.")
    else:
        item(0, type="agent_message", text="Done; nothing else to change.")


def ide_errors(turn: int, outside: str) -> None:
    ops = Path("calc/ops.py")
    if turn == 1:
        names = "\n\n".join(f"def f{i}():\n    return undefined_{i}" for i in range(7))
        Path("calc/extra.py").write_text(names + "\n")
        ops.write_text(ops.read_text() + "\n\ndef helper():\n    return missing_name\n")
        Path("note.md").write_text("undefined_markdown\n")
        os.symlink(outside, "calc/outside.py")
        item(0, type="agent_message", text="Added helpers.")
    else:
        ops.write_text(ops.read_text().split("\n\ndef helper():")[0] + "\n")
        item(0, type="agent_message", text="Removed the broken helper.")


def claude(turn: int) -> int:
    """Claude Code's stream: init, the messages (tool calls answered by user lines), result."""
    session = {"session_id": "5e55-10n", "parent_tool_use_id": None}
    emit({"type": "system", "subtype": "init", "model": "claude-scripted", "cwd": os.getcwd(),
          "tools": ["Bash"], "claude_code_version": "2.1.50", **session})  # fmt: skip
    usage = {"input_tokens": 40, "output_tokens": 9, "cache_read_input_tokens": 60}
    if turn == 1:
        done = subprocess.run(["bash", "-c", SED], capture_output=True, text=True)
        call = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": SED}}
        emit({"type": "assistant", "message": {"id": "msg_1", "model": "claude-scripted",
              "role": "assistant", "content": [call], "usage": usage}, **session})  # fmt: skip
        result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": done.stdout,
                  "is_error": done.returncode != 0}  # fmt: skip
        emit({"type": "user", "message": {"role": "user", "content": [result]}, **session})
    text = "Fixed sub()." if turn == 1 else "Nothing left to do."
    emit({"type": "assistant", "message": {"id": f"msg_{turn}_end", "model": "claude-scripted",
          "role": "assistant", "content": [{"type": "text", "text": text}], "usage": usage},
          **session})  # fmt: skip
    emit({"type": "result", "subtype": "success", "is_error": False, "num_turns": 2,
          "result": text, "total_cost_usd": 0.25, "usage": usage, **session})  # fmt: skip
    return 0


def mini(trace: str) -> None:
    done = subprocess.run(["bash", "-c", SED], capture_output=True, text=True)
    observation = f"<returncode>{done.returncode}</returncode>\n<output>\n{done.stdout}</output>"
    messages = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Fix sub()."},
        {"role": "assistant", "content": f"THOUGHT: fix it.\n\n```bash\n{SED}\n```"},
        {"role": "user", "content": observation},
        {"role": "assistant", "content": "sub() now subtracts."},
    ]
    doc = {
        "info": {"exit_status": "Submitted", "mini_version": "1.9.0"},
        "messages": messages,
        "trajectory_format": "mini-swe-agent-1",
    }
    Path(trace).write_text(json.dumps(doc))


def mcp(config_path: str) -> None:
    config = Path(config_path)
    seen = {"path": config_path, "mode": oct(config.stat().st_mode & 0o777), "servers": {}}
    for name, server in json.loads(config.read_text())["mcpServers"].items():
        env = os.environ | server.get("env", {})
        process = subprocess.Popen(
            [server["command"], *server.get("args", [])], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, env=env, cwd=server.get("cwd"), text=True,
        )  # fmt: skip
        calls = [
            ("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "scripted", "version": "1"}}),
            ("tools/list", {}),
            ("tools/call", {"name": "git_status", "arguments": {"repo_path": os.getcwd()}}),
        ]  # fmt: skip
        answers = []
        for number, (method, params) in enumerate(calls, 1):
            rpc(process, {"jsonrpc": "2.0", "id": number, "method": method, "params": params})
            answers.append(read_answer(process, number))
            if method == "initialize":
                rpc(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        process.stdin.close()
        process.wait(timeout=10)
        tools = sorted(tool["name"] for tool in answers[1]["tools"])
        status = answers[2]["content"][0]["text"]
        # [name, hash] pairs: `"GIT_TOKEN": "<hex>"` reads as a secret and would be redacted
        hashed = [
            [k, hashlib.sha256(v.encode()).hexdigest()] for k, v in server.get("env", {}).items()
        ]
        seen["servers"][name] = {"tools": tools, "status": status, "env": hashed}
    item(0, type="agent_message", text=json.dumps(seen))


def rpc(process: subprocess.Popen, message: dict) -> None:
    process.stdin.write(json.dumps(message) + "\n")
    process.stdin.flush()


def read_answer(process: subprocess.Popen, number: int) -> dict:
    for line in process.stdout:
        message = json.loads(line)
        if message.get("id") == number:
            return message["result"]
    raise SystemExit(f"the MCP server closed before answering request {number}")


def main() -> int:
    mode, _message, turn = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if mode == "crash":
        print("boom: the agent crashed", file=sys.stderr)
        return 3
    if mode == "mini":
        mini(sys.argv[4])
        return 0
    if mode == "claude":
        return claude(turn)
    if mode == "killhost":
        os.kill(os.getppid(), 9)
        return 1
    if mode == "garbage":
        print("this is not a trace")
        return 0
    emit({"type": "thread.started", "thread_id": "scripted"})
    emit({"type": "turn.started"})
    if mode == "fix":
        fix(turn)
    elif mode == "mcp":
        mcp(sys.argv[4])
    elif mode == "ideerr":
        ide_errors(turn, sys.argv[4])
    elif mode == "plant":
        fix(turn)
        names = ("turn-2.jsonl", "trajectory.jsonl", "verify.json", ".passwd")
        for name in names if turn == 1 else ():
            os.symlink(sys.argv[4], Path("..", name))
    elif mode == "orphan":
        late = f"sleep 300; echo escaped > {sys.argv[4]}.late"
        child = subprocess.Popen(["sh", "-c", late], start_new_session=True)
        Path(sys.argv[4]).write_text(str(child.pid))
        item(0, type="agent_message", text="Started a background job.")
    elif mode == "holdpipe":
        subprocess.Popen(["setsid", "sleep", "30"])  # inherits stdout, leaves our process group
        time.sleep(120)
    elif mode == "breakgit":
        subprocess.run(["rm", "-rf", ".git"], check=True)
        item(0, type="agent_message", text="Cleaned up.")
    elif mode == "deep":
        fix(turn)
        folder = Path("calc")
        for _ in range(1500):
            folder /= "d"
            folder.mkdir()
        (folder / "x.py").write_text("print(undefined_name)\n")
    elif mode == "fifo":
        fix(turn)
        exclude = Path(".git", "info", "exclude")
        exclude.unlink(missing_ok=True)
        os.mkfifo(exclude)
    elif mode == "swap":
        here = Path.cwd()
        here.rename(here.with_name("repo.agent"))
        here.symlink_to(sys.argv[4], target_is_directory=True)
        item(0, type="agent_message", text="Fixed.")
    elif mode == "partial":
        item(
            0,
            type="command_execution",
            command="bash -lc 'ls'",
            aggregated_output="calc\n",
            exit_code=0,
            status="completed",
        )
        item(1, type="agent_message", text="Looking around first.")
        time.sleep(120)
    elif mode == "sleep":
        Path(sys.argv[4]).write_text(str(os.getpid()))
        time.sleep(120)
    emit(
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 100, "cached_input_tokens": 0, "output_tokens": 20},
        }
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
