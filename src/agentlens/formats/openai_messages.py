"""Plain OpenAI chat-completions message lists with `tool_calls`, and two wrappers around them.

* a bare list `[{role, content, tool_calls?, tool_call_id?}]`;
* a litellm request+response log `{messages, tools, kwargs, response{choices, usage, model}, cost}`:
  the response's message is appended as the final turn and its usage and cost are kept;
* a Harbor `*.traces.json` list `[{conversations, agent, model, task, episode, run_id, …}]`:
  one trajectory per conversation.

There is no standard place for task, model or outcome; the wrappers supply what they have.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from agentlens.errors import SchemaError
from agentlens.formats._json import ReadGuard, arr, loads, obj, require, text
from agentlens.formats._openai_steps import messages_to_steps
from agentlens.formats._openhands_common import usage_from_response
from agentlens.formats._reader_base import SuffixReader
from agentlens.formats._typed_json import listed
from agentlens.trajectory import Agent, Source, Trajectory

ROLE = re.compile(rb'"role"\s*:\s*"(system|user|assistant|tool|developer)"')
LIST_START = re.compile(rb"^\s*\[\s*(\{|\])")
HARBOR_START = re.compile(rb'^\s*\[\s*\{\s*"conversations"\s*:')
LITELLM_START = re.compile(rb'^\s*\{\s*"messages"\s*:\s*\[')
# Keys that mark other list-shaped formats (OpenHands events, mini-swe-agent, Claude Code lines).
FOREIGN = (b'"action":', b'"observation":', b'"trajectory_format"', b'"parentUuid"', b'"kind":')


class OpenAIMessagesReader(SuffixReader):
    name: ClassVar[str] = "openai-messages"
    suffixes: ClassVar[tuple[str, ...]] = (".json",)

    @classmethod
    def handles_location(cls, path: Path) -> bool:
        return super().handles_location(path) and not path.name.endswith(".traj.json")

    @classmethod
    def handles_bytes(cls, head: bytes) -> bool:
        if HARBOR_START.match(head) or LITELLM_START.match(head):
            return True
        squeezed = head.replace(b'": ', b'":')
        return bool(
            LIST_START.match(head) and ROLE.search(head) and not any(k in squeezed for k in FOREIGN)
        )

    def read(self, path: Path, data: bytes) -> Iterator[Trajectory]:
        doc = loads(path, data, self.name)
        if isinstance(doc, dict):
            with ReadGuard(path, self.name):  # a wrong-typed field of the response
                trajectory = self._litellm(path, doc)
            yield trajectory
        elif (
            isinstance(doc, list) and doc and isinstance(doc[0], dict) and "conversations" in doc[0]
        ):
            yield from self._harbor(path, doc)
        else:
            messages = require(path, self.name, doc, list, "top level")
            yield self._trajectory(path, messages, id=path.stem)

    def _trajectory(self, path: Path, messages: list[Any], **fields: Any) -> Trajectory:
        for i, message in enumerate(messages):
            require(path, self.name, message, dict, f"message {i}")
            if "role" not in message:
                raise SchemaError(path, f"message {i} has no 'role'", self.name)
            with ReadGuard(path, self.name):
                _check_calls(message, f"message {i}")
        index = fields.pop("index", None)
        steps = messages_to_steps(messages)
        task = next((s.text for s in steps if s.kind == "user"), None)
        return Trajectory(
            task=task,
            source=Source(format=self.name, path=str(path), index=index),
            steps=steps,
            **fields,
        )

    def _litellm(self, path: Path, doc: dict[str, Any]) -> Trajectory:
        messages = list(require(path, self.name, doc.get("messages"), list, "'messages'"))
        raw_response = doc.get("response")
        response: dict[str, Any] = raw_response if isinstance(raw_response, dict) else {}
        choices = listed(response.get("choices"), "response.choices")
        if choices and isinstance(choices[0], dict) and isinstance(choices[0].get("message"), dict):
            messages.append(choices[0]["message"])
        model = _text_field(path, response, "model", "response.model")
        traj = self._trajectory(path, messages, id=path.stem, model=model)
        usage = usage_from_response(response.get("usage"), "response.usage")
        last_turn = [s for s in traj.steps if s.kind in ("agent", "tool")][-1:]
        if usage is not None and last_turn:
            last_turn[0].usage = usage
        cost = doc.get("cost")
        if isinstance(cost, int | float) and last_turn:
            last_turn[0].cost = float(cost)
            traj.reported_cost = float(cost)
        traj.reported_usage = usage
        traj.metadata = {
            k: doc[k] for k in ("timestamp", "latency_sec", "context_window") if k in doc
        }
        return traj

    def _harbor(self, path: Path, entries: list[Any]) -> Iterator[Trajectory]:
        for i, entry in enumerate(entries):
            require(path, self.name, entry, dict, f"entry {i}")
            conversation = require(
                path, self.name, entry.get("conversations"), list, f"entry {i} 'conversations'"
            )
            meta = {
                k: v for k, v in entry.items() if k not in ("conversations", "tool_definitions")
            }
            yield self._trajectory(
                path,
                conversation,
                id=f"{path.name.removesuffix('.json')}#{i}",
                index=i,
                task_id=_text_field(path, entry, "task", f"entry {i} 'task'"),
                model=_text_field(path, entry, "model", f"entry {i} 'model'"),
                agent=Agent(name=_text_field(path, entry, "agent", f"entry {i} 'agent'")),
                metadata=meta,
            )


def _check_calls(message: dict[str, Any], where: str) -> None:
    """The shape `messages_to_steps` relies on: a list of call objects with string ids, and
    string `tool_call_id` and `name` on tool results."""
    text(message.get("role"), f"{where} role")
    if message.get("role") == "tool":
        text(message.get("tool_call_id"), f"{where} tool_call_id")
        text(message.get("name"), f"{where} name")
    if message.get("role") != "assistant":
        return
    for j, call in enumerate(arr(message.get("tool_calls"), f"{where} tool_calls")):
        text(obj(call, f"{where} tool_calls[{j}]").get("id"), f"{where} tool_calls[{j}].id")


def _text_field(path: Path, entry: dict[str, Any], key: str, where: str) -> str | None:
    with ReadGuard(path, OpenAIMessagesReader.name):
        return text(entry.get(key), where)
