"""GitHub Copilot CLI session events: `~/.copilot/session-state/<session>/events.jsonl`.

One JSON event per line, `{type, data, id, timestamp, parentId}`, with dot-namespaced types:
* `session.start` (`sessionId`, `copilotVersion`, `context.cwd/repository/branch`),
  `session.model_change` (`newModel`: the model of the messages that follow);
* `system.message`, `user.message` (`content`; `transformedContent` is what the model saw);
* `assistant.message`: `content`, `reasoningText`, `outputTokens` and `toolRequests[]`
  (`toolCallId`, `name`, `arguments` as an object): each request is one tool step;
* `tool.execution_start` / `tool.execution_complete` (`toolCallId`, `success`, `result.content`,
  `error.message`): the call's observation. A start whose id no message requested is still a
  call and becomes its own step;
* `session.shutdown`: `modelMetrics.<model>.usage` (input, output, cache-read tokens) for the
  whole session, the only place input tokens appear: it becomes `reported_usage`. Messages carry
  only their output tokens, so steps get no usage of their own (a step usage without input tokens
  would understate every total); an `assistant.usage` event, when present, is attached to the
  message before it.
Tool names follow the CLI's `str_replace_editor`-like tools (`view`, `create`, `edit`, `bash`).
Calls start in `context.cwd` until a `bash` command moves its shell
(`_steps.start_in_session_folder`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from agentlens.formats._json import (
    ReadGuard,
    arr,
    count,
    head_text,
    iter_jsonl,
    json_type,
    obj,
    text,
)
from agentlens.formats._reader_base import SuffixReader
from agentlens.formats._steps import (
    ToolView,
    call_arguments,
    classify,
    parse_time,
    start_in_session_folder,
)
from agentlens.trajectory import Agent, Source, Step, ToolCategory, Trajectory, Usage

EVENT = re.compile(r'"type"\s*:\s*"(?:session|user|assistant|tool|system)\.[a-z_]+"')
STARTS = re.compile(r'\{"type"\s*:\s*"session\.start"|"producer"\s*:\s*"copilot-agent"')
NUMBERED = re.compile(r"\s*1\. ")
EDITOR = {"view": "view", "create": "create", "edit": "str_replace", "str_replace": "str_replace"}
SHELL = {"bash", "powershell", "read_bash", "write_bash", "shell"}
RENAMED = {"web_fetch": "webfetch", "report_intent": "think", "update_todo": "todowrite"}
CONTEXT_KEPT = ("cwd", "repository", "branch")
SHUTDOWN_KEPT = ("totalPremiumRequests", "codeChanges", "shutdownType")
QUIET = {"assistant.turn_start", "assistant.turn_end", "session.info", "session.mode_changed"}


class CopilotCliReader(SuffixReader):
    name: ClassVar[str] = "copilot-cli"
    suffixes: ClassVar[tuple[str, ...]] = (".jsonl",)

    @classmethod
    def handles_bytes(cls, head: bytes) -> bool:
        first = head_text(head).split("\n", 1)[0]
        return bool(EVENT.search(first) and STARTS.search(first))

    def read(self, path: Path, data: bytes) -> Iterator[Trajectory]:
        session = _Session(path)
        with ReadGuard(path, self.name, loose=True):
            for number, event in iter_jsonl(path, data, self.name):
                if not isinstance(event, dict):
                    session.warnings.append(f"line {number}: skipped (a JSON {json_type(event)})")
                    continue
                session.take(event, f"line {number}")
            trajectory = session.trajectory()
        yield trajectory


def tool_view(name: str, args: dict[str, Any]) -> ToolView:
    """Category, command and files of a Copilot CLI tool call, through the shared rules."""
    key = name.strip().lower()
    if key in EDITOR:
        return classify("str_replace_editor", {**args, "command": EDITOR[key]})
    if key in SHELL:
        command = args.get("command")
        return classify("bash", {"command": command} if isinstance(command, str) else {})
    return classify(RENAMED.get(key, name), args)


class _Session:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.steps: list[Step] = []
        self.calls: dict[str, Step] = {}
        self.start: dict[str, Any] = {}
        self.shutdown: dict[str, Any] = {}
        self.completed: dict[str, Any] = {}
        self.model: str | None = None
        self.turn = -1
        self.last_message: Step | None = None
        self.warnings: list[str] = []
        self.unread: Counter[str] = Counter()

    def take(self, event: dict[str, Any], where: str) -> None:
        kind = text(event.get("type"), f"{where}: type") or ""
        data = obj(event.get("data"), f"{where}: data")
        when = parse_time(event.get("timestamp"))
        handler = HANDLERS.get(kind)
        if handler is not None:
            handler(self, data, when, f"{where} ({kind})")
        elif kind not in QUIET:
            self.unread[kind] += 1

    def _session_start(self, data: dict[str, Any], when: Any, where: str) -> None:
        self.start = data

    def _model_change(self, data: dict[str, Any], when: Any, where: str) -> None:
        self.model = text(data.get("newModel"), f"{where}: newModel") or self.model

    def _said(self, data: dict[str, Any], when: Any, where: str, kind: Any) -> None:
        # an autopilot nudge has empty `content`: what the model read is `transformedContent`
        said = text(data.get("content"), f"{where}: content") or ""
        said = said or text(data.get("transformedContent"), f"{where}: transformedContent") or ""
        self._add(Step(index=0, kind=kind, text=said, timestamp=when, raw=data))

    def _system(self, data: dict[str, Any], when: Any, where: str) -> None:
        self._said(data, when, where, "system")

    def _user(self, data: dict[str, Any], when: Any, where: str) -> None:
        self._said(data, when, where, "user")

    def _assistant(self, data: dict[str, Any], when: Any, where: str) -> None:
        self.turn += 1
        said = text(data.get("content"), f"{where}: content") or ""
        thought = text(data.get("reasoningText"), f"{where}: reasoningText") or ""
        common: dict[str, Any] = {"turn": self.turn, "timestamp": when, "model": self.model}
        requests = arr(data.get("toolRequests"), f"{where}: toolRequests")
        first = len(self.steps)
        for i, request in enumerate(requests):
            request = obj(request, f"{where}: toolRequests[{i}]")
            name = text(request.get("name"), f"{where}: toolRequests[{i}].name") or "unknown"
            call_id = text(request.get("toolCallId"), f"{where}: toolRequests[{i}].toolCallId")
            step_text = (said or thought) if i == 0 else ""
            self._call(name, request.get("arguments"), call_id, text=step_text, **common)
        if not requests:
            self._add(Step(index=0, kind="agent", text=said or thought, **common))
        self.steps[first].raw = data
        self.last_message = self.steps[first]

    def _call(self, name: str, raw_args: Any, call_id: str | None, **fields: Any) -> Step:
        args = call_arguments(raw_args)
        view = tool_view(name, args)
        step = Step(
            index=0,
            kind="tool",
            tool_name=name,
            category=view.category,
            call_id=call_id,
            arguments=args,
            command=view.command,
            files=view.files,
            **fields,
        )
        self._add(step)
        if call_id is not None:
            self.calls[call_id] = step
        return step

    def _tool_start(self, data: dict[str, Any], when: Any, where: str) -> None:
        call_id = text(data.get("toolCallId"), f"{where}: toolCallId")
        if call_id is not None and call_id in self.calls:
            return
        name = text(data.get("toolName"), f"{where}: toolName") or "unknown"
        fields = {"turn": max(self.turn, 0), "timestamp": when, "model": self.model}
        self._call(name, data.get("arguments"), call_id, raw=data, **fields)

    def _tool_complete(self, data: dict[str, Any], when: Any, where: str) -> None:
        call_id = text(data.get("toolCallId"), f"{where}: toolCallId")
        step = self.calls.get(call_id or "")
        if step is None:
            self.warnings.append(f"{where}: result of unknown call {call_id!r} skipped")
            return
        result = obj(data.get("result"), f"{where}: result")
        error = data.get("error")
        message = obj(error, f"{where}: error").get("message") if isinstance(error, dict) else error
        output = result.get("content") if "content" in result else message
        step.observation = None if output is None else str(output)
        step.is_error = data.get("success") is False or error is not None
        if step.tool_name == "view" and step.observation and not NUMBERED.match(step.observation):
            step.category = ToolCategory.LIST_DIR  # a file's view is numbered; this listed a folder

    def _usage(self, data: dict[str, Any], when: Any, where: str) -> None:
        if self.last_message is not None:
            self.last_message.usage = _tokens(data, where)

    def _shutdown(self, data: dict[str, Any], when: Any, where: str) -> None:
        self.shutdown = data

    def _task_complete(self, data: dict[str, Any], when: Any, where: str) -> None:
        self.completed = data

    def _add(self, step: Step) -> None:
        step.index = len(self.steps)
        self.steps.append(step)

    def trajectory(self) -> Trajectory:
        start, context = self.start, obj(self.start.get("context"), "session.start: context")
        metadata: dict[str, Any] = {k: context[k] for k in CONTEXT_KEPT if k in context}
        start_in_session_folder(self.steps, context.get("cwd"))
        ended = {k: self.shutdown[k] for k in SHUTDOWN_KEPT if k in self.shutdown}
        metadata.update(ended)
        if self.completed:
            metadata["task_complete"] = self.completed
        if self.unread:
            metadata["unread_events"] = dict(self.unread)
        if self.warnings:
            metadata["warnings"] = self.warnings
        models = [s.model for s in self.steps if s.model]
        return Trajectory(
            id=str(start.get("sessionId") or self.path.parent.name),
            task=next((s.text for s in self.steps if s.kind == "user"), None),
            agent=Agent(name="copilot-cli", version=_version(start)),
            model=models[0] if models else None,
            source=Source(format=CopilotCliReader.name, path=str(self.path)),
            steps=self.steps,
            reported_usage=_session_usage(self.shutdown),
            metadata=metadata,
        )


def _version(start: dict[str, Any]) -> str | None:
    version = start.get("copilotVersion")
    return version if isinstance(version, str) else None


def _tokens(usage: dict[str, Any], where: str) -> Usage:
    return Usage(
        prompt_tokens=count(usage.get("inputTokens"), f"{where}: inputTokens"),
        completion_tokens=count(usage.get("outputTokens"), f"{where}: outputTokens"),
        cached_tokens=count(usage.get("cacheReadTokens"), f"{where}: cacheReadTokens"),
    )


def _session_usage(shutdown: dict[str, Any]) -> Usage | None:
    metrics = obj(shutdown.get("modelMetrics"), "session.shutdown: modelMetrics")
    if not metrics:
        return None
    total = Usage()
    for model, entry in metrics.items():
        where = f"session.shutdown: modelMetrics.{model}.usage"
        total = total + _tokens(obj(obj(entry, where).get("usage"), where), where)
    return total


HANDLERS = {
    "session.start": _Session._session_start,
    "session.model_change": _Session._model_change,
    "system.message": _Session._system,
    "user.message": _Session._user,
    "assistant.message": _Session._assistant,
    "assistant.usage": _Session._usage,
    "tool.execution_start": _Session._tool_start,
    "tool.execution_complete": _Session._tool_complete,
    "session.shutdown": _Session._shutdown,
    "session.task_complete": _Session._task_complete,
}
