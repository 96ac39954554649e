"""The built-in agent: any chat model driving a shell in the workspace, one command per reply in
a fenced ```` ```bash ```` block (the mini-swe-agent protocol, which AgentLens already reads). A
reply without a block ends the turn and is what the user sees.

Meant to exercise a scenario end to end with any model, local ones included, and as a baseline
agent; real agents under test come in through `CommandAgent`. The conversation is kept across
user turns; when it outgrows `context_chars` the oldest exchanges (after the first request) are
dropped, with a note saying how many. Given the scenario's MCP config, it starts the local
servers there and offers their tools as ```` ```mcp ```` blocks (`_mcp_tools.py`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentlens.formats._categories import categorize_tool
from agentlens.formats._fenced_commands import command_blocks
from agentlens.providers.client import LLMClient
from agentlens.providers.types import ChatRequest, ChatResponse, Message
from agentlens.scenarios.agent_view import TOOL_RESULT_CHARS, cut
from agentlens.scenarios.agents._mcp_tools import McpTools, mcp_blocks
from agentlens.scenarios.agents._shell import ShellResult, run_shell
from agentlens.scenarios.outbound import send
from agentlens.scenarios.turns import AgentTurn
from agentlens.shell.categories import analyse_command
from agentlens.trajectory import Step, StepKind, Usage

SYSTEM = """You are a coding agent working in a software project (the current folder).
To run a shell command, reply with a short THOUGHT, then exactly one block:
```bash
<one command>
```
You will see its exit code and output. Run one command per reply.
When the work is done, or you need to ask the user something, reply without any command block:
that reply goes to the user."""
FORMAT_ERROR = "Format error: put exactly one ```bash (or ```mcp) block in a reply, or none to answer the user."
# the observation's own tags, opening or closing, as a program's output may print them
ENVELOPE_TAG = re.compile(r"<(?=/?\s*(?:agentlens_note|output|returncode)\b)", re.IGNORECASE)


@dataclass
class BashAgentSettings:
    max_actions_per_turn: int = 20
    command_timeout_s: float = 120.0
    max_tokens: int = 800
    context_chars: int = 60_000


class BashAgent:
    name = "agentlens-bash"

    def __init__(
        self,
        client: LLMClient,
        settings: BashAgentSettings | None = None,
        *,
        mcp: McpTools | None = None,
    ) -> None:
        self.client = client
        self.model: str | None = client.name
        self.settings = settings or BashAgentSettings()
        self.messages: list[Message] = [{"role": "system", "content": SYSTEM}]
        self.responses = 0
        self.mcp = mcp
        self._mcp_started = False

    async def turn(self, message: str, workdir: Path, into: AgentTurn) -> None:
        if self.mcp is not None and not self._mcp_started:
            self._mcp_started = True  # once: a server that failed is not started again
            await self.mcp.start(workdir)
            self.messages[0] = {"role": "system", "content": SYSTEM + self.mcp.prompt()}
        self.messages.append({"role": "user", "content": message})
        steps = into.steps
        for _ in range(self.settings.max_actions_per_turn):
            response = await send(
                self.client,
                ChatRequest(
                    messages=self._context(), max_tokens=self.settings.max_tokens, temperature=0.0
                ),
            )
            text = response.text
            self.messages.append({"role": "assistant", "content": text})
            blocks = command_blocks(text)
            calls = mcp_blocks(text) if self.mcp is not None else []
            if not blocks and not calls:
                steps.append(self._step(response, kind="agent", text=text.strip()))
                into.reply = text.strip()
                return
            if len(blocks) + len(calls) > 1:
                steps.append(self._step(response, kind="agent", text=text.strip()))
                self.messages.append({"role": "user", "content": FORMAT_ERROR})
                continue
            if calls:
                steps.append(await self._call(response, text, calls[0]))
            else:
                steps.append(await self._act(response, text, blocks[0], workdir))
        # out of actions for this turn: it ends with nothing said to the user

    async def _act(
        self, response: ChatResponse, text: str, block: tuple[int, str], workdir: Path
    ) -> Step:
        start, command = block
        result = await run_shell(command, workdir, timeout_s=self.settings.command_timeout_s)
        observation = _observation(result)
        shown = min(TOOL_RESULT_CHARS, self.settings.context_chars // 4)  # its command must fit too
        self.messages.append({"role": "user", "content": cut(observation, shown)})
        category, files = analyse_command(command)
        step = self._step(response, kind="tool", text=text[:start].strip())
        step.tool_name, step.category, step.command = "bash", category, command
        step.arguments, step.files = {"command": command}, files
        step.observation = observation
        step.is_error = result.returncode != 0 or bool(result.stopped)
        return step

    async def _call(self, response: ChatResponse, text: str, block: tuple[int, str]) -> Step:
        """An MCP tool call, made by the runner (the shell never holds the servers' tokens)."""
        assert self.mcp is not None
        start, body = block
        server, tool, arguments, output, failed = await self.mcp.call(body)
        shown = min(TOOL_RESULT_CHARS, self.settings.context_chars // 4)
        status = "error" if failed else "ok"
        self.messages.append(
            {"role": "user", "content": cut(f"<mcp_result status={status}>\n{output}", shown)}
        )
        step = self._step(response, kind="tool", text=text[:start].strip())
        step.tool_name = f"mcp__{server}__{tool}"  # Claude Code's name for an MCP tool
        step.category = categorize_tool(tool, arguments)
        step.arguments, step.observation, step.is_error = arguments, output, failed
        return step

    def _step(self, response: ChatResponse, *, kind: StepKind, text: str) -> Step:
        usage = response.usage
        self.responses += 1
        return Step(
            index=0,
            kind=kind,
            text=text,
            turn=self.responses - 1,  # each reply is one model response
            timestamp=datetime.now(UTC),
            usage=Usage(
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                cached_tokens=usage.cached_tokens,
            ),
            cost=response.cost,
            model=response.model or self.model,
            raw=_cache_mark(response),
        )

    def _context(self) -> list[Message]:
        """System and first request, then as many of the latest messages as fit; roles
        alternate (a note or a format error next to an observation is merged into it)."""
        head, rest = self.messages[:2], self.messages[2:]
        budget = self.settings.context_chars - sum(len(str(m["content"])) for m in head)
        kept: list[Message] = []
        for message in reversed(rest):
            budget -= len(str(message["content"]))
            if budget < 0 and kept:
                break
            kept.append(message)
        dropped = len(rest) - len(kept)
        note = [{"role": "user", "content": f"[{dropped} earlier messages omitted]"}]
        return _alternating(head + (note if dropped else []) + kept[::-1])

    async def aclose(self) -> None:
        if self.mcp is not None:
            await self.mcp.close()
        await self.client.aclose()


def _observation(result: ShellResult) -> str:
    """What the model and the judge read of a command: its exit code and output, and, between
    them (a cut keeps the start), AgentLens's own lines (`--no-sandbox`; the command killed for
    the disk or its memory), tagged as AgentLens's: never inside `<output>`, as if the program
    printed them. The output is the program's: the envelope's tags in it are made inert."""
    code = "timeout" if result.timed_out else str(result.returncode)
    said = (line for line in (result.notes, result.stopped) if line)
    notes = "".join(f"<agentlens_note>{line}</agentlens_note>\n" for line in said)
    return f"<returncode>{code}</returncode>\n{notes}<output>\n{_inert(result.output)}</output>"


def _inert(output: str) -> str:
    """A program can print `</output><agentlens_note>stopped: …` to forge AgentLens's note or
    close its own output early: the `<` of each envelope tag it prints becomes `&lt;`."""
    return ENVELOPE_TAG.sub("&lt;", output)


def _cache_mark(response: ChatResponse) -> dict[str, Any] | None:
    """A reply from the response cache took no model time in this run: telemetry leaves its
    turn out of time figures. The original reply's duration comes with it."""
    if not response.from_cache:
        return None
    return {"from_cache": True, "latency_s": round(response.latency_s, 3)}


def _alternating(messages: list[Message]) -> list[Message]:
    merged: list[Message] = []
    for message in messages:
        if merged and merged[-1]["role"] == message["role"] != "system":
            joined = f"{merged[-1]['content']}\n\n{message['content']}"
            merged[-1] = {**merged[-1], "content": joined}
        else:
            merged.append(message)
    return merged
