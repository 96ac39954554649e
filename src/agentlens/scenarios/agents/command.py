"""An external agent CLI under test, run once per user message, whose trace AgentLens reads (any
detected format). The trace is its stdout, or the file it writes to `{trace}` when the command
names that placeholder. For example:

    --agent 'cmd:codex exec --json --full-auto -C {workdir} -- {message}'
    --agent-resume 'codex exec --json --full-auto -C {workdir} resume --last -- {message}'
    --agent 'cmd:mini --model openai/gpt-4.1 --yolo --exit-immediately --task={message} -o {trace}'
    --agent 'cmd:claude -p --output-format stream-json --verbose --permission-mode acceptEdits
             -- {message}'   --agent-resume 'claude -p --continue --output-format stream-json
             --verbose --permission-mode acceptEdits -- {message}'

The command is split like a shell line once, then `{message}`, `{workdir}`, `{turn}`,
`{trace}` and `{mcp_config}` (the scenario's MCP servers as an `mcpServers` JSON file,
`agentlens.scenarios.mcp`) are replaced inside each argument: the message is never parsed by a
shell. The CLI gets
the caller's environment (it needs its own credentials). Each turn's trace is kept in the session
folder (`turn-<n>.jsonl` from stdout, `turn-<n>.json` via `{trace}`). A non-zero exit or an
unreadable trace is an agent failure (stop rule 5)."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import shutil
from pathlib import Path

from agentlens.errors import AgentLensError, ConfigError, TraceError
from agentlens.formats.load import read_path
from agentlens.redaction import masked_tail
from agentlens.scenarios.agents._shell import run_process
from agentlens.scenarios.turns import AgentTurn
from agentlens.trajectory import Step, Trajectory
from agentlens.verification import isolation

INTERPRETER = re.compile(r"^(python[\d.]*|node|bash|sh|uv|uvx|npx|pipx)$")
SCRIPT = re.compile(r"\.(py|js|mjs|ts|sh)$")
PLACEHOLDER = re.compile(r"\{(message|workdir|turn|trace|mcp_config)\}")


class AgentFailure(AgentLensError):
    """The agent under test crashed or produced nothing readable."""


class CommandAgent:
    def __init__(
        self,
        command: str,
        *,
        resume: str | None = None,
        trace_dir: Path,
        suffix: str = ".jsonl",
        mcp_config: Path | None = None,
    ) -> None:
        self.first = _split(command)
        self.resume = _split(resume) if resume else None
        self.takes_mcp = any("{mcp_config}" in p for p in [*self.first, *(self.resume or [])])
        self.mcp_config = mcp_config
        for argv in filter(None, (self.first, self.resume)):
            _check_program(argv)
        self.name = _program_name(self.first)
        self.model: str | None = None
        self.trace_dir = trace_dir
        self.suffix = suffix
        self.turns = 0

    async def turn(self, message: str, workdir: Path, into: AgentTurn) -> None:
        template = self.resume if self.resume and self.turns else self.first
        self.turns += 1
        to_file = any("{trace}" in part for part in template)
        trace = self.trace_dir / f"turn-{self.turns}{'.json' if to_file else self.suffix}"
        trace.parent.mkdir(parents=True, exist_ok=True)
        values = {
            "message": message,
            "workdir": str(workdir),
            "turn": str(self.turns),
            "trace": str(trace),
            "mcp_config": str(self.mcp_config or ""),
        }
        argv = [_fill(part, values) for part in template]
        # the sandbox shows the folders of files the command line names, not of a message's
        named = isolation.named_files([_fill(part, {**values, "message": ""}) for part in template])
        stdout = trace.with_suffix(".stdout.log") if to_file else trace
        try:
            result, err = await run_process(
                argv,
                workdir,
                timeout_s=None,
                stdout_path=stdout,
                writable=[trace.parent],
                readable=named,
            )
        except asyncio.CancelledError:  # a timeout: keep what the trace shows so far
            into.steps[:], into.reply = self._partial(trace)
            raise
        if result.stopped:  # killed for the disk or its memory: kept as a timeout keeps it
            into.steps[:], into.reply = self._partial(trace)
            raise AgentFailure(f"{argv[0]} was {result.stopped}")
        if result.returncode != 0:
            tail = masked_tail(err.strip(), 400) or _tail(stdout)
            raise AgentFailure(f"{argv[0]} exited with {result.returncode}: {tail}")
        if isolation.planted(trace):  # AgentLens may be root: a link could name any host file
            raise AgentFailure(f"{argv[0]} left a link or special file at {trace}, not a trace")
        if not trace.is_file():
            raise AgentFailure(f"{argv[0]} wrote no trace to {trace}")
        into.steps[:], into.reply = self._read(trace)

    def _read(self, trace: Path) -> tuple[list[Step], str]:
        try:
            trajectories = read_path(trace)
        except TraceError as exc:
            raise AgentFailure(f"the agent's output is not a readable trace: {exc}") from exc
        steps = [s for t in trajectories for s in t.steps if s.kind in ("agent", "tool")]
        for t in trajectories:
            _keep_reported_cost(t)
        self.model = self.model or next((t.model for t in trajectories if t.model), None)
        reply = next((s.text for s in reversed(steps) if s.kind == "agent" and s.text), "")
        return steps, reply

    def _partial(self, trace: Path) -> tuple[list[Step], str]:
        """The complete lines of a trace cut short (JSONL); nothing if even they do not read."""
        if isolation.planted(trace) or not trace.is_file():
            return [], ""
        data = trace.read_bytes()
        whole = isolation.reclaim(trace.with_name(f"{trace.stem}.partial{trace.suffix}"))
        whole.write_bytes(data[: data.rfind(b"\n") + 1] if trace.suffix == ".jsonl" else data)
        try:
            return self._read(whole)
        except AgentFailure:
            return [], ""

    async def aclose(self) -> None:
        return None


def _keep_reported_cost(trajectory: Trajectory) -> None:
    """A turn's cost that only the trace's totals give (Claude Code's `total_cost_usd`) goes on
    its first step, so the dialog's cost still sums over steps."""
    if trajectory.reported_cost is None or any(s.cost is not None for s in trajectory.steps):
        return
    first = next((s for s in trajectory.steps if s.kind in ("agent", "tool")), None)
    if first is not None:
        first.cost = trajectory.reported_cost


def _split(command: str) -> list[str]:
    """Split once. The program, or the script an interpreter runs (`python ./agent.py`), is made
    absolute when it names a file here, since the command runs inside the workspace; no other
    argument is touched (a file named there must stay the workspace's copy)."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:  # e.g. "No closing quotation"
        raise ConfigError(f"agent command {command!r}: {exc}") from None
    if not argv:
        raise ConfigError("the agent command is empty")
    argv[0] = _absolute(argv[0], bare=False)  # a bare program name is looked up on PATH
    if len(argv) > 1 and INTERPRETER.match(Path(argv[0]).name):
        argv[1] = _absolute(argv[1], bare=True)
        if (
            SCRIPT.search(argv[1])
            and not PLACEHOLDER.search(argv[1])
            and not Path(argv[1]).is_file()
        ):
            raise ConfigError(f"agent script {argv[1]!r} not found")
    return argv


def _absolute(part: str, *, bare: bool) -> str:
    """`./agent.py` -> `/here/agent.py`; links are kept (a venv's `bin/python` stays itself)."""
    local = (bare or "/" in part) and not part.startswith("-") and not os.path.isabs(part)
    if local and not PLACEHOLDER.search(part) and os.path.isfile(part):
        return os.path.abspath(part)
    return part


def _check_program(argv: list[str]) -> None:
    """A program that is not there fails every attempt: say so before anything runs."""
    if PLACEHOLDER.search(argv[0]):
        return  # e.g. `{workdir}/bin/agent`: only the workspace will tell
    if shutil.which(argv[0]) is None:
        raise ConfigError(f"agent program {argv[0]!r} not found (not on PATH, or not executable)")


def _tail(path: Path) -> str:
    return masked_tail(path.read_text(encoding="utf-8", errors="replace").strip(), 400)


def _program_name(argv: list[str]) -> str:
    """`codex` for `codex exec …`; the script for `python agent.py …`, not `python`."""
    names = [Path(part).name for part in argv if not part.startswith("-")]
    if len(names) > 1 and INTERPRETER.match(names[0]):
        return names[1]
    return names[0] if names else "agent"


def _fill(part: str, values: dict[str, str]) -> str:
    """One pass, so a message that contains `{workdir}` stays as written."""
    return PLACEHOLDER.sub(lambda match: values[match[1]], part)
