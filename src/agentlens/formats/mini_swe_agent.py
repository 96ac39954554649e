"""mini-swe-agent `*.traj.json`: a bare message list (oldest), or `{info, messages,
trajectory_format: "mini-swe-agent-1" | "mini-swe-agent-1.1", instance_id}`.

An assistant message runs the one fenced command block in its content (v1) or its `tool_calls`
(v2 tool-calling models); the observation is the next `user` (or `tool`) message,
`<returncode>N</returncode><output>...</output>`, kept whole. Usage and cost are per response
(`extra.response.usage`, `extra.cost`). The verdict is never in the file: `agentlens.outcomes`
finds it beside `trajs/` (`logs/<id>/report.json`, an sb-cli report). Each command is a new
process started in `info.config.environment.cwd` (a `cd` moves no later command): that is every
call's `Step.cwd`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from agentlens.errors import SchemaError
from agentlens.formats import _openhands_common as common
from agentlens.formats._fenced_commands import command_blocks
from agentlens.formats._json import ReadGuard, loads, require
from agentlens.formats._reader_base import SuffixReader
from agentlens.formats._steps import parse_time
from agentlens.formats._typed_json import scalar_text
from agentlens.shell.categories import analyse_command
from agentlens.shell.working_dir import working_folder
from agentlens.trajectory import Agent, Source, Step, StepKind, ToolCategory, Trajectory, Usage

RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
SUCCESS = "<returncode>0</returncode>"  # how nearly every observation starts
SUBMIT = ("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT")
LIST_HEAD = re.compile(rb'^\s*\[\s*\{\s*"role"\s*:')
DICT_HEAD = re.compile(rb'^\s*\{\s*"(info|messages|trajectory_format|instance_id)"\s*:')
DICT_MARKERS = (b'"mini_version"', b'"trajectory_format"')


class MiniSweAgentReader(SuffixReader):
    name: ClassVar[str] = "mini-swe-agent"
    suffixes: ClassVar[tuple[str, ...]] = (".json",)

    @classmethod
    def handles_bytes(cls, head: bytes) -> bool:
        # A bare message list is only ours when it shows mini-swe-agent's observation markup;
        # any other {role, content} list is left to the plain OpenAI-messages reader.
        if LIST_HEAD.match(head[:256]):
            return b"<returncode>" in head or b"mswea_bash_command" in head
        return bool(DICT_HEAD.match(head[:256])) and any(m in head for m in DICT_MARKERS)

    def read(self, path: Path, data: bytes) -> Iterator[Trajectory]:
        with ReadGuard(path, self.name, loose=True):  # e.g. a token count that is a list
            trajectory = self._trajectory(path, data)
        yield trajectory

    def _trajectory(self, path: Path, data: bytes) -> Trajectory:
        doc = loads(path, data, self.name)
        if isinstance(doc, list):
            messages, info, instance_id, version = doc, {}, None, "bare-list"
        else:
            doc = require(path, self.name, doc, dict, "top level")
            messages = require(path, self.name, doc.get("messages"), list, "'messages'")
            info = common.as_dict(doc.get("info"))
            instance_id, version = doc.get("instance_id"), str(doc.get("trajectory_format"))
        number = first_unreadable(messages)
        if number >= 0:
            require(path, self.name, messages[number], dict, f"message {number}")
            raise SchemaError(path, f"message {number} has no 'role'", self.name)
        if type(instance_id) is not str and instance_id is not None:
            instance_id = scalar_text(instance_id, "instance_id")
        task_id = instance_id or None
        steps = steps_of(messages)
        folder = working_folder(_environment(info).get("cwd"))
        for step in steps:
            if step.kind == "tool":
                step.cwd = folder
        stats = common.as_dict(info.get("model_stats"))
        cost = stats.get("instance_cost")
        mini_version = info.get("mini_version")
        if type(mini_version) is not str and mini_version is not None:
            mini_version = scalar_text(mini_version, "info.mini_version")
        return Trajectory(
            id=_run_id(path, task_id),
            task_id=task_id,
            task=next((s.text for s in steps if s.kind == "user"), None),
            agent=Agent(name="mini-swe-agent", version=mini_version),
            model=_model(info),
            source=Source(format=self.name, path=str(path), format_version=version),
            steps=steps,
            reported_cost=float(cost) if isinstance(cost, int | float) else None,
            metadata={k: info[k] for k in ("exit_status", "submission") if k in info},
        )


def first_unreadable(messages: list[Any]) -> int:
    """The number of the first message that is not an object with a `role`, or -1."""
    for number, message in enumerate(messages):
        if not isinstance(message, dict) or "role" not in message:
            return number
    return -1


def _run_id(path: Path, task_id: str | None) -> str:
    """`<run>/<instance>` in the `<run>/trajs/<instance>/<instance>.traj.json` layout."""
    name = task_id or path.name.removesuffix(".json").removesuffix(".traj")
    run = _run_name(os.path.dirname(str(path)))
    return name if run is None else f"{run}/{name}"


@lru_cache(maxsize=256)
def _run_name(folder_text: str) -> str | None:
    """The run of a file in `<run>/trajs/<instance>/`, once per folder (`Path.parents` is slow)."""
    parents = Path(folder_text).parents  # "" (a bare file name) is ".", as `Path.parent` says
    return parents[1].name if len(parents) > 1 and parents[0].name == "trajs" else None


def steps_of(messages: list[dict[str, Any]]) -> list[Step]:
    """The steps of a checked message list."""
    steps: list[Step] = []
    open_calls: dict[str, Step] = {}
    turn = 0
    for message in messages:
        role = message["role"]
        content = message.get("content")
        text = content if isinstance(content, str) else common.text_of(content)
        if role == "assistant":
            made = _assistant(message, text, turn)
            turn += 1
            steps += made
            open_calls = _open_calls(made)
        elif open_calls and role in ("user", "tool"):
            if len(open_calls) == 1:  # whatever its tool_call_id, it answers the one open call
                step = open_calls.popitem()[1]
            else:
                key = str(message.get("tool_call_id") or next(iter(open_calls)))
                answered = open_calls.pop(key, None)
                step = answered or open_calls.pop(next(iter(open_calls)))
            _observe(step, text, message)
        else:
            kind: StepKind = "system" if role == "system" else "user"
            steps.append(Step(index=0, kind=kind, text=text, raw=message))
    return common.renumber(steps)


def _open_calls(made: list[Step]) -> dict[str, Step]:
    """The calls of one reply still waiting for their result, by call id (else position)."""
    if len(made) == 1:  # nearly every reply: one command, or prose with none
        step = made[0]
        return {step.call_id or "0": step} if step.kind == "tool" else {}
    return {s.call_id or str(i): s for i, s in enumerate(made) if s.kind == "tool"}


def _assistant(message: dict[str, Any], text: str, turn: int) -> list[Step]:
    extra = message.get("extra")
    if not isinstance(extra, dict):
        extra = {}
    usage, cost, model, when = _response(extra)
    blocks = command_blocks(text)
    commands = _commands(message, blocks, extra)
    if not commands:
        step = Step(
            index=0, kind="agent", text=text, turn=turn, usage=usage, cost=cost, raw=message
        )
        step.model, step.timestamp = model, when
        return [step]
    thought = _thought(text[: blocks[0][0]] if blocks else text)
    steps = []
    raw: dict[str, Any] | None = message
    for call_id, command, tool_name in commands:
        category, files = _categorize(command)
        steps.append(
            Step(
                index=0,
                kind="tool",
                text=thought,
                turn=turn,
                tool_name=tool_name,
                category=category,
                call_id=call_id,
                arguments={"command": command},
                command=command,
                files=files,
                timestamp=when,
                usage=usage,
                cost=cost,
                model=model,
                raw=raw,
            )
        )
        # the response's usage and cost go with its first call, and so does the message: a
        # message of N calls saved with each would be N copies (output quadratic in its size)
        usage = cost = raw = None
    return steps


def _commands(
    message: dict[str, Any], blocks: list[tuple[int, str]], extra: dict[str, Any]
) -> list[tuple[str | None, str, str]]:
    """(call id, command, tool name) of each action the message asked for."""
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        found = []
        for call in map(common.as_dict, calls):
            function = common.as_dict(call.get("function"))
            arguments = common.parse_arguments(function.get("arguments")) or {}
            command = str(arguments.get("command") or "")
            call_id = call.get("id")
            if type(call_id) is not str and call_id is not None:
                call_id = scalar_text(call_id, "tool call id")
            found.append((call_id, command, str(function.get("name") or "bash")))
        return found
    actions = extra.get("actions")
    if isinstance(actions, list) and actions:
        return [(None, str(common.as_dict(a).get("command") or ""), "bash") for a in actions]
    # mini-swe-agent runs a reply only when it holds exactly one block (else: format error)
    return [(None, blocks[0][1], "bash")] if len(blocks) == 1 else []


def _observe(step: Step, text: str, message: dict[str, Any]) -> None:
    step.observation = text
    if text.startswith(SUCCESS):  # what RETURNCODE would find first, without the regex
        step.is_error = False
    else:
        match = RETURNCODE.search(text)
        if match:
            code: Any = int(match[1])
        else:
            code = common.as_dict(message.get("extra")).get("returncode")
        step.is_error = code != 0 if isinstance(code, int) else None
    step.raw = {"call": step.raw, "result": message}


def _categorize(command: str) -> tuple[ToolCategory, list[str]]:
    """Category and files of a command; the submit command finishes the run and names none."""
    if SUBMIT[0] in command or SUBMIT[1] in command:
        return ToolCategory.FINISH, []
    return analyse_command(command)


def _thought(before_block: str) -> str:
    return before_block.strip().removeprefix("THOUGHT:").strip()


def _response(
    extra: dict[str, Any],
) -> tuple[Usage | None, float | None, str | None, datetime | None]:
    """Usage, cost, model and time of the model response behind a reply (`extra.response`)."""
    response = extra.get("response")
    if not isinstance(response, dict):
        response = {}
    usage = response.get("usage")
    cost = extra.get("cost")
    if cost is None and isinstance(usage, dict):
        cost = usage.get("cost")
    model = response.get("model")
    if type(model) is not str and model is not None:
        model = scalar_text(model, "extra.response.model")
    when: Any = extra.get("timestamp")
    if when is None:  # v2 stamps the reply (`extra.timestamp`), v1 has the API's `created`
        when = response.get("created")
    return (
        common.usage_from_response(usage),
        float(cost) if isinstance(cost, (int, float)) else None,
        model,
        datetime.fromtimestamp(when, UTC) if type(when) in (int, float) else _created(when),
    )


def _created(value: Any) -> datetime | None:
    """A time that is not a plain number: a number subclass other than bool, or ISO text."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, tz=UTC)
    return parse_time(value)


def _environment(info: dict[str, Any]) -> dict[str, Any]:
    return common.as_dict(common.as_dict(info.get("config")).get("environment"))


def _model(info: dict[str, Any]) -> str | None:
    config = common.as_dict(info.get("config"))
    name = common.as_dict(config.get("model")).get("model_name")
    return str(name) if name else None
