"""The simulated user (spec §4.2): an LLM that plays a persona pursuing the scenario's private
instruction, reads each agent turn and answers it, or ends the dialog with `terminate_dialog`.

Models without tool calls (most small local ones) may end the dialog with a line
`TERMINATE_DIALOG: <reason>` (anywhere in the answer) instead; the released runner offers only the tool. In reply to the
agent's first turn a termination is re-sampled up to 5 times (spec §4.3), and so is an empty
answer; if every sample is empty the dialog ends with "the simulated user gave no message"."""

from __future__ import annotations

import hashlib
import platform
import re
from dataclasses import dataclass, field
from typing import Any

from agentlens.formats._openhands_common import parse_arguments
from agentlens.providers.client import LLMClient
from agentlens.providers.types import ChatRequest, ChatResponse, Message
from agentlens.scenarios.agent_view import cut
from agentlens.scenarios.outbound import send
from agentlens.scenarios.personas import Persona
from agentlens.scenarios.scenario import Scenario
from agentlens.scenarios.turns import UserTurn

TERMINATE_TOOL = "terminate_dialog"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": TERMINATE_TOOL,
            "description": "End the conversation with the agent.",
            "parameters": {
                "type": "object",
                "properties": {"termination_reason": {"type": "string"}},
                "required": ["termination_reason"],
            },
        },
    }
]
TEXT_TERMINATE = re.compile(r"^[ \t]*(?:TERMINATE_DIALOG|terminate_dialog)\b\W*(.*)$", re.MULTILINE)
MAX_RESAMPLES = 5
MIN_LATEST_CHARS = 1000
OLD_DIFF = re.compile(r"<code_diffs>.*?</code_diffs>", re.DOTALL)
DIFF_POINTER = "<code_diffs>(see the latest turn: its diff holds every change so far)</code_diffs>"
OLD_IDE_ERRORS = re.compile(r"<ide_errors>.*?</ide_errors>", re.DOTALL)
IDE_POINTER = "<ide_errors>(see the latest turn: its errors are of the files now)</ide_errors>"
NO_MESSAGE = "the simulated user gave no message"
IDE_NOTE = (
    "After each agent turn you see what it did, the code changes so far and, in <ide_errors>, "
    "up to five errors the IDE shows in each changed file."
)


FIRST_PROMPT = "Write your first message to the agent: ask it for what you want done."


@dataclass
class SimulatorSettings:
    max_tokens: int = 400
    temperature: float | None = 0.7
    """Above zero, so a re-sample can differ; the seed changes per sample too (cache keys)."""
    context_chars: int = 100_000
    """What one request may hold. Only the latest turn keeps its diff (each diff shows all
    changes so far); past this the oldest turns are left out, with a note."""
    os_name: str = field(default_factory=platform.system)


class SimulatedUser:
    """One dialog's simulator. `messages` is its full request transcript (the judge's evidence,
    spec §5.2); `spent` its dollars (the fold budget counts only these, spec §4.4)."""

    def __init__(
        self,
        client: LLMClient,
        persona: Persona,
        scenario: Scenario,
        *,
        agent_name: str,
        project: str,
        session_key: str,
        settings: SimulatorSettings | None = None,
    ) -> None:
        self.client = client
        self.settings = settings or SimulatorSettings()
        self.session_key = session_key
        self.messages: list[Message] = [
            {
                "role": "system",
                "content": system_prompt(
                    persona, scenario, agent_name, project, self.settings.os_name
                ),
            }
        ]
        self.spent = 0.0
        self.calls = 0
        self.last_request: list[Message] = []
        """The messages of the latest call as sent (spec §5.2 gives them to the judge)."""

    async def first_message(self, scenario: Scenario) -> UserTurn:
        """The opening request: the scenario's fixed message verbatim, else the simulator's."""
        prompt = FIRST_PROMPT
        if scenario.fixed_first_message and scenario.first_user_message:
            self.messages.append({"role": "user", "content": prompt})
            self.messages.append({"role": "assistant", "content": scenario.first_user_message})
            return UserTurn(text=scenario.first_user_message)
        return await self._answer(prompt, may_terminate=False)

    async def reply(self, agent_view: str, *, first_reply: bool) -> UserTurn:
        """The answer to one agent turn (shown as `agent_view`)."""
        return await self._answer(agent_view, may_terminate=not first_reply)

    async def final_turn(self, agent_view: str) -> UserTurn:
        """The logged-only turn after a timeout or an agent failure."""
        return await self._answer(agent_view, may_terminate=True)

    async def _answer(self, prompt: str, *, may_terminate: bool) -> UserTurn:
        self.messages.append({"role": "user", "content": prompt})
        turn = UserTurn(terminate=NO_MESSAGE)
        for sample in range(MAX_RESAMPLES + 1):
            turn = self._parse(await self._call(sample))
            turn.resamples = sample
            if turn.terminate is None or (may_terminate and turn.terminate != NO_MESSAGE):
                break
        content = turn.text or f"{TERMINATE_TOOL}: {turn.terminate}"
        self.messages.append({"role": "assistant", "content": content})
        return turn

    async def _call(self, sample: int) -> ChatResponse:
        seed_text = f"{self.session_key}/{len(self.messages)}/{sample}"
        self.last_request = self._request_messages()
        request = ChatRequest(
            messages=self.last_request,
            tools=TOOLS,
            temperature=self.settings.temperature,
            max_tokens=self.settings.max_tokens,
            seed=int(hashlib.sha256(seed_text.encode()).hexdigest()[:8], 16),
        )
        response = await send(self.client, request)
        self.calls += 1
        if not response.from_cache:  # a cached answer keeps the cost it had when it was paid
            self.spent += response.cost or 0.0
        return response

    def _request_messages(self) -> list[Message]:
        """System and opening exchange, then the latest messages that fit `context_chars`,
        starting at a user message; older diffs are replaced by a pointer to the latest one."""
        latest = max(i for i, m in enumerate(self.messages) if m["role"] == "user")
        shown = [
            {**m, "content": _old_turn(str(m["content"]))}
            if m["role"] == "user" and i != latest else m
            for i, m in enumerate(self.messages)
        ]  # fmt: skip
        head, rest = shown[:3], shown[3:]
        budget = self.settings.context_chars - sum(len(str(m["content"])) for m in head)
        start = len(rest)
        for i in range(len(rest) - 1, -1, -1):
            budget -= len(str(rest[i]["content"]))
            if budget < 0 and start < len(rest):
                break
            start = i
        while start < len(rest) and rest[start]["role"] != "user":
            start += 1
        kept = rest[start:]
        if start and kept:
            note = f"[{start} earlier messages left out]\n"
            kept = [{**kept[0], "content": note + str(kept[0]["content"])}, *kept[1:]]
        return _fit_latest(head + kept, self.settings.context_chars)

    @staticmethod
    def _parse(response: ChatResponse) -> UserTurn:
        for call in response.tool_calls:
            function = call["function"] if isinstance(call.get("function"), dict) else call
            if function.get("name") == TERMINATE_TOOL:
                args = parse_arguments(function.get("arguments")) or {}
                reason = str(args.get("termination_reason") or "finished")
                return UserTurn(text=response.text.strip(), terminate=reason, cost=response.cost)
        text = response.text.strip()
        match = TEXT_TERMINATE.search(text)  # on any line: models often thank the agent first
        if match:
            return UserTurn(terminate=match[1].strip() or "finished", cost=response.cost)
        return UserTurn(text=text, terminate=None if text else NO_MESSAGE, cost=response.cost)


def _fit_latest(messages: list[Message], budget: int) -> list[Message]:
    """Cut the newest message when it alone overruns the budget: from its end, where a view's
    diff is, so the agent's own words go last."""
    over = sum(len(str(m["content"])) for m in messages) - budget
    if over <= 0:
        return messages
    content = str(messages[-1]["content"])
    keep = max(len(content) - over - 60, MIN_LATEST_CHARS)
    return [*messages[:-1], {**messages[-1], "content": cut(content, keep)}]


def system_prompt(
    persona: Persona, scenario: Scenario, agent_name: str, project: str, os_name: str
) -> str:
    task = scenario.user_instruction or scenario.first_user_message or scenario.name
    return "\n".join(
        [
            f"You play a user of the {agent_name} coding agent. You want this done:",
            f"<task_description>\n{task.strip()}\n</task_description>",
            "Rules:",
            "- Talk to the agent as that user would. Never do the work yourself.",
            "- Never ask for anything beyond the task and never change its requirements.",
            "- Correct the agent if it drifts away from the task.",
            f"- When the agent has finished the last step of the task, call the tool "
            f"{TERMINATE_TOOL} with your reason. If you cannot call tools, answer with one "
            f"line instead: TERMINATE_DIALOG: <reason>.",
            f"<persona>\n{persona.text}\n</persona>",
            "Write at most 5 sentences; usually 1 or 2.",
            f"Project: operating system {os_name}, project folder {project}.",
            *([] if scenario.ide_errors == "none" else [IDE_NOTE]),
        ]
    )


def _old_turn(content: str) -> str:
    """An earlier turn without its diff and IDE errors: the latest turn's show the state now."""
    return OLD_IDE_ERRORS.sub(IDE_POINTER, OLD_DIFF.sub(DIFF_POINTER, content))


def transcript(messages: list[Message]) -> list[dict[str, Any]]:
    """The request transcript without its system message, as the judge is given it (spec §5.2)."""
    return [dict(m) for m in messages if m.get("role") != "system"]
