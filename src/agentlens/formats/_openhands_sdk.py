"""OpenHands V1 software-agent-sdk events -> steps, shared by the SDK JSONL and eval readers.

`ActionEvent` is a tool call (arguments are the JSON string in `tool_call.arguments`); its
`ObservationEvent` / `AgentErrorEvent` / `UserRejectObservation` names it by `action_id` or
`tool_call_id`. Usage and cost only come as running totals in `ConversationStateUpdateEvent`
(`key: stats`, summed over every `usage_to_metrics` entry); each difference is charged to the next
agent step, i.e. the model response that the update accounts for. `Step.raw` is the action event,
or `{call, result}` once its observation is attached.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentlens.errors import SchemaError
from agentlens.formats import _openhands_common as oh
from agentlens.formats._json import ReadGuard, ShapeError
from agentlens.formats._steps import parse_time
from agentlens.formats._typed_json import scalar_text
from agentlens.trajectory import Step, StepKind, ToolCategory, Usage

ACTION_KINDS = {"FinishAction": ToolCategory.FINISH, "ThinkAction": ToolCategory.THINK}
OBSERVATION_KINDS = {"ObservationEvent", "AgentErrorEvent", "UserRejectObservation"}


class V1Converter:
    """Turns a list of V1 SDK events into steps; also used for V1 `history` in eval outputs."""

    def __init__(self, path: Path, format: str) -> None:
        self.path = path
        self.format = format
        self.model: str | None = None
        self.totals = oh.RunningTotals()
        self.pending: tuple[Usage, float | None] | None = None
        self.last_stats: tuple[Usage, float] | None = None

    def convert(self, events: list[Any]) -> list[Step]:
        self.steps: list[Step] = []
        self.by_id: dict[str, Step] = {}
        self.turns: dict[str, int] = {}
        with ReadGuard(self.path, self.format):
            for position, event in enumerate(events):
                if not isinstance(event, dict):
                    message = f"event {position} should be an object"
                    raise SchemaError(self.path, message, self.format)
                self._event(event)
        self._flush_pending()
        oh.start_folders(self.steps, "observation")
        return oh.renumber(self.steps)

    def reported(self) -> tuple[Usage | None, float | None]:
        if self.last_stats is None:
            return None, None
        return self.last_stats

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("kind")
        if not isinstance(kind, str):
            return  # not an event this reader knows (a list `kind` would not even hash)
        if kind == "ActionEvent":
            self._add(self._action(event), event, charge=True)
        elif kind in OBSERVATION_KINDS:
            self._observation(event)
        elif kind == "MessageEvent":
            self._add(self._message(event), event, charge=event.get("source") == "agent")
        elif kind == "SystemPromptEvent":
            text = oh.text_of((event.get("system_prompt") or {}).get("text"))
            self._add(Step(index=0, kind="system", text=text, raw=event), event, charge=False)
        elif kind == "ConversationStateUpdateEvent" and event.get("key") == "stats":
            self._stats(event.get("value"))

    def _add(self, step: Step, event: dict[str, Any], *, charge: bool) -> None:
        step.timestamp = parse_time(event.get("timestamp"))
        if charge and self.pending is not None:
            step.usage, step.cost = self.pending
            step.model = self.model
            self.pending = None
        self.steps.append(step)
        for key in (event.get("id"), event.get("tool_call_id")):
            if isinstance(key, str):
                self.by_id[key] = step

    def _action(self, event: dict[str, Any]) -> Step:
        action = oh.as_dict(event.get("action"))
        call = oh.as_dict(event.get("tool_call"))
        tool_name = str(event.get("tool_name") or call.get("name") or action.get("kind") or "")
        arguments = oh.parse_arguments(call.get("arguments"))
        if arguments is None:
            arguments = {k: v for k, v in action.items() if k != "kind"}
        category = ACTION_KINDS.get(str(action.get("kind"))) or oh.categorize(tool_name, arguments)
        command = oh.command_text(category, arguments)
        response = event.get("llm_response_id")
        turn_key = str(response) if response else f"event:{len(self.steps)}"
        text = oh.text_of(event.get("thought"))
        call_id = event.get("tool_call_id")
        if type(call_id) is not str and call_id is not None:
            call_id = scalar_text(call_id, "ActionEvent tool_call_id")
        if category is ToolCategory.FINISH and not text:
            text = str(action.get("message") or "")
        return Step(
            index=0,
            kind="tool",
            text=text,
            turn=self.turns.setdefault(turn_key, len(self.turns)),
            tool_name=tool_name,
            category=category,
            call_id=call_id,
            arguments=arguments,
            command=command,
            files=oh.files_of(arguments, command),
            raw=event,
        )

    def _message(self, event: dict[str, Any]) -> Step:
        message = oh.as_dict(event.get("llm_message"))
        role = message.get("role") or event.get("source")
        kind: StepKind = "user" if role == "user" else "system" if role == "system" else "agent"
        return Step(index=0, kind=kind, text=oh.text_of(message.get("content")), raw=event)

    def _observation(self, event: dict[str, Any]) -> None:
        step = self.by_id.get(str(event.get("action_id"))) or self.by_id.get(
            str(event.get("tool_call_id"))
        )
        if step is None or step.kind != "tool" or step.observation is not None:
            step = _orphan_step(event)
            self._add(step, event, charge=False)
            step.raw = event
        else:
            step.raw = {"call": step.raw, "result": event}
        step.observation, step.is_error = _observation_text(event)
        oh.settle_listing(step)

    def _stats(self, value: Any) -> None:
        metrics = (value or {}).get("usage_to_metrics") if isinstance(value, dict) else None
        if not isinstance(metrics, dict):
            return
        usage, cost = Usage(), 0.0
        for entry in metrics.values():
            if isinstance(entry, dict):
                where = "stats usage_to_metrics entry"
                usage = usage + oh.usage_from_metrics(entry.get("accumulated_token_usage"), where)
                cost += _cost(entry.get("accumulated_cost"), where)
                if entry.get("model_name") and self.model is None:
                    self.model = str(entry["model_name"])
        delta, delta_cost = self.totals.step(usage, cost)
        if self.pending is not None:
            delta, delta_cost = (
                self.pending[0] + delta,
                (self.pending[1] or 0.0) + (delta_cost or 0.0),
            )
        self.pending = (delta, delta_cost)
        self.last_stats = (usage, cost)

    def _flush_pending(self) -> None:
        """Usage reported after the last agent step is charged to that step, so totals add up."""
        if self.pending is None:
            return
        for step in reversed(self.steps):
            if step.kind in ("agent", "tool"):
                step.usage = (step.usage or Usage()) + self.pending[0]
                step.cost = (step.cost or 0.0) + (self.pending[1] or 0.0)
                break
        self.pending = None


def _cost(value: Any, where: str) -> float:
    try:
        return float(value or 0.0)
    except (TypeError, ValueError):
        raise ShapeError(
            f"{where}.accumulated_cost should be a number, found {value!r:.40}"
        ) from None


def _orphan_step(event: dict[str, Any]) -> Step:
    """A result whose call is not in the file: keep it, classified from what it echoes."""
    tool_name = str(event.get("tool_name") or event.get("kind"))
    command = oh.as_dict(event.get("observation")).get("command")
    arguments = {"command": command} if isinstance(command, str) else {}
    category = oh.categorize(tool_name, arguments) if arguments else ToolCategory.OTHER
    return Step(
        index=0,
        kind="tool",
        tool_name=tool_name,
        category=category,
        call_id=_call_id(event),
        arguments=arguments,
        command=oh.command_text(category, arguments),
    )


def _observation_text(event: dict[str, Any]) -> tuple[str, bool]:
    kind = event.get("kind")
    if kind == "AgentErrorEvent":
        return str(event.get("error") or ""), True
    if kind == "UserRejectObservation":
        return str(event.get("rejection_reason") or "rejected by the user"), True
    observation = oh.as_dict(event.get("observation"))
    text = oh.text_of(observation.get("content"))
    if not text:
        text = str(observation.get("output") or observation.get("message") or "")
    metadata = oh.as_dict(observation.get("metadata"))
    code = observation.get("exit_code")
    if code is None:
        code = metadata.get("exit_code")
    failed = bool(observation.get("is_error") or observation.get("error"))
    return text, failed or bool(oh.exit_code_error(code))


def _call_id(event: dict[str, Any]) -> str | None:
    value = event.get("tool_call_id")
    return value if type(value) is str else scalar_text(value, "observation tool_call_id")
