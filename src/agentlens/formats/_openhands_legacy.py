"""OpenHands legacy (V0) events -> steps, shared by the event-list and eval-output readers.

An observation names its action in `cause`; the flattened resolver histories have no ids, so an
observation there belongs to the action just before it. Usage comes from the running totals in
`llm_metrics` when present, else from the `model_response.usage` of each model response (counted
once, although every parallel call and its observation repeat it). Events between a `delegate`
action and the observation it caused belong to the sub-agent and become a subtrajectory.
`Step.raw` is the action event, or `{call, result}` once its observation is attached.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentlens.errors import SchemaError
from agentlens.formats import _openhands_common as oh
from agentlens.formats._json import ReadGuard, ShapeError
from agentlens.formats._steps import parse_time
from agentlens.formats._typed_json import scalar_text
from agentlens.trajectory import Agent, Source, Step, StepKind, ToolCategory, Trajectory, Usage

SKIPPED_ACTIONS = {"recall", "change_agent_state", "condensation", "condensation_request", "null"}
SKIPPED_OBSERVATIONS = {"recall", "agent_state_changed", "null", "condensation"}
MESSAGE_ACTIONS = {"message", "system"}


class LegacyConverter:
    """Turns one V0 event list into steps; also used for the `history` of eval outputs."""

    def __init__(self, path: Path, format: str) -> None:
        self.path = path
        self.format = format
        self.model: str | None = None
        self.reported_usage: Usage | None = None
        self.reported_cost: float | None = None

    def convert(self, events: list[Any], trajectory_id: str) -> tuple[list[Step], list[Trajectory]]:
        self.steps: list[Step] = []
        self.subs: list[Trajectory] = []
        self.by_id: dict[Any, Step] = {}
        self.totals = oh.RunningTotals()
        self.turns: dict[str, int] = {}
        self.counted: set[str] = set()
        self.trajectory_id = trajectory_id
        with ReadGuard(self.path, self.format):
            self._events(events)
        oh.start_folders(self.steps, "extras")
        return oh.renumber(self.steps), self.subs

    def _events(self, events: list[Any]) -> None:
        position, count = 0, len(events)
        while position < count:  # one loop, no call per event: this runs for every event
            event = events[position]
            if not isinstance(event, dict):
                raise SchemaError(
                    self.path,
                    f"event {position} should be an object, found {type(event).__name__}",
                    self.format,
                )
            if "observation" in event:
                self._observation(event)
            elif "action" in event:
                if event["action"] == "delegate":
                    position = self._delegate(events, position, event)
                    continue
                self._action(event)
            elif "content" not in event:
                raise SchemaError(
                    self.path,
                    f"event {position} has neither 'action' nor 'observation'",
                    self.format,
                )
            position += 1

    def _action(self, event: dict[str, Any]) -> Step | None:
        action = str(event["action"])
        if action in SKIPPED_ACTIONS:
            return None
        given = event.get("args")
        args: dict[str, Any] = given if isinstance(given, dict) else _flat_args(event)
        meta = event.get("tool_call_metadata")
        if not isinstance(meta, dict):
            meta = {}
        response = meta.get("model_response")
        if not isinstance(response, dict):
            response = None
        if action in MESSAGE_ACTIONS:
            step = self._message(event, action, args)
        else:
            step = self._tool(event, action, args, meta, response)
        if response is not None or "llm_metrics" in event:  # most messages carry neither
            self._add_usage(step, event, response)
        self.steps.append(step)
        if "id" in event and not isinstance(event["id"], list | dict):  # ids key a dict
            self.by_id[event["id"]] = step
        return step

    def _message(self, event: dict[str, Any], action: str, args: dict[str, Any]) -> Step:
        source = event.get("source")
        kind: StepKind
        if action == "system":
            kind = "system"
        elif source is None:
            kind = "user" if not self.steps else "agent"
        else:
            kind = "user" if source == "user" else "agent"
        text = args.get("content") or event.get("message") or event.get("content") or ""
        return Step(
            index=0, kind=kind, text=str(text), timestamp=parse_time(event.get("timestamp")),
            raw=event,
        )  # fmt: skip

    def _tool(
        self,
        event: dict[str, Any],
        action: str,
        args: dict[str, Any],
        meta: dict[str, Any],
        response: dict[str, Any] | None,
    ) -> Step:
        tool_name = str(meta.get("function_name") or action)
        call_id = meta.get("tool_call_id")
        if type(call_id) is not str and call_id is not None:
            call_id = scalar_text(call_id, f"event {_id(event)} tool_call_metadata.tool_call_id")
        arguments = None
        if response is not None and call_id is not None:
            arguments = _call_arguments(response, call_id)
        if not arguments:
            arguments = dict(args)
            arguments.pop("thought", None)
        if action == "finish":  # whatever tool carried it
            category = ToolCategory.FINISH
        else:
            name = action if action in {"run", "read", "write"} else tool_name
            category = oh.categorize(name, arguments)
        command = oh.command_text(category, arguments)
        return Step(
            index=0,
            kind="tool",
            text=str(
                args.get("thought") or event.get("thought") or _finish_text(action, event, args)
            ),
            turn=self._turn(response),
            tool_name=tool_name,
            category=category,
            call_id=call_id,
            arguments=arguments,
            command=command,
            files=oh.files_of(arguments, command),
            timestamp=parse_time(event.get("timestamp")),
            raw=event,
        )

    def _observation(self, event: dict[str, Any]) -> None:
        kind = str(event["observation"])
        if kind in SKIPPED_OBSERVATIONS:
            return
        cause = event.get("cause")
        if cause is not None:
            step = None if isinstance(cause, list | dict) else self.by_id.get(cause)
        else:  # flattened resolver histories have no ids: the result follows its call
            step = self._last_open_tool() if "id" not in event else None
        if step is None and kind == "error":
            self.steps.append(_rejected_call(event))
            return
        if step is None or step.observation is not None:
            step = Step(index=0, kind="tool", tool_name=kind, category=ToolCategory.OTHER)
            step.timestamp = parse_time(event.get("timestamp"))
            self.steps.append(step)
        content = event.get("content")
        text = content if isinstance(content, str) else oh.text_of(content)
        step.observation = text
        step.is_error = _observation_error(kind, event, text)
        if step.category is ToolCategory.READ_FILE and text.startswith(oh.DIRECTORY_LISTING):
            step.category = ToolCategory.LIST_DIR  # the `view` printed a listing
        step.raw = {"call": step.raw, "result": event} if step.raw else event

    def _last_open_tool(self) -> Step | None:
        for step in reversed(self.steps):
            if step.kind == "tool":
                return step if step.observation is None else None
        return None

    def _delegate(self, events: list[Any], position: int, event: dict[str, Any]) -> int:
        step = self._action({**event, "action": "delegate"})
        end = position + 1
        while end < len(events) and not _caused_by(events[end], event.get("id")):
            end += 1
        inner = LegacyConverter(self.path, self.format)
        sub_id = f"{self.trajectory_id}/delegate-{len(self.subs) + 1}"
        sub_steps, sub_subs = inner.convert(events[position + 1 : end], sub_id)
        args = event.get("args") or {}
        self.subs.append(
            Trajectory(
                id=sub_id,
                task=str((args.get("inputs") or {}).get("task") or "") or None,
                agent=Agent(name=str(args.get("agent") or "OpenHands delegate")),
                model=inner.model,
                source=Source(format=self.format, path=str(self.path)),
                steps=sub_steps,
                parent_id=self.trajectory_id,
                subtrajectories=sub_subs,
            )
        )
        if step is not None:
            step.subtrajectory = sub_id
        if end < len(events):
            self._observation(events[end])
        return end + 1

    def _turn(self, response: dict[str, Any] | None) -> int:
        response_id = response.get("id") if response is not None else None
        key = str(response_id) if response_id is not None else f"event:{len(self.steps)}"
        turns = self.turns
        turn = turns.get(key)
        if turn is None:
            turn = turns[key] = len(turns)
        return turn

    def _add_usage(
        self, step: Step, event: dict[str, Any], response: dict[str, Any] | None
    ) -> None:
        if response is not None and response.get("model"):
            self.model = self.model or str(response["model"])
        try:  # the event's id goes into the message only on failure (an f-string per event shows)
            self._event_usage(step, event, response)
        except ShapeError as exc:
            raise ShapeError(f"event {_id(event)} {exc}") from None

    def _event_usage(
        self, step: Step, event: dict[str, Any], response: dict[str, Any] | None
    ) -> None:
        metrics = event.get("llm_metrics")
        if isinstance(metrics, dict):
            token_usage = metrics.get("accumulated_token_usage")
            usage = oh.usage_from_metrics(token_usage, "accumulated usage")
            cost = metrics.get("accumulated_cost")
            cost = cost if isinstance(cost, int | float) else None
            step.usage, step.cost = self.totals.step(usage, cost)
            self.reported_usage = usage  # the last running total is the run's own total
            self.reported_cost = float(cost) if isinstance(cost, int | float) else None
            model = token_usage.get("model") if isinstance(token_usage, dict) else None
            if type(model) is not str and model is not None:
                model = scalar_text(model, "accumulated usage model")
            step.model = model
        elif response is not None:
            key = str(response.get("id"))
            if key not in self.counted:
                self.counted.add(key)
                step.usage = oh.usage_from_response(response.get("usage"), "model_response.usage")
                model = response.get("model")
                if type(model) is not str and model is not None:
                    model = scalar_text(model, "model_response.model")
                step.model = model


def _flat_args(event: dict[str, Any]) -> dict[str, Any]:
    """Resolver histories put an action's arguments at the top level of the event."""
    skip = {
        "action",
        "action_risk",
        "is_confirmed",
        "keep_prompt",
        "images_urls",
        "kernel_init_code",
    }
    return {k: v for k, v in event.items() if k not in skip}


def _call_arguments(response: dict[str, Any], call_id: Any) -> dict[str, Any] | None:
    """The exact arguments of this call, from the model response that made it."""
    choices = response.get("choices")
    for choice in choices if isinstance(choices, list) else ():
        message = choice.get("message") if isinstance(choice, dict) else None
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        for call in calls if isinstance(calls, list) else ():
            if isinstance(call, dict) and call.get("id") == call_id:
                function = call.get("function")
                return oh.parse_arguments(
                    function.get("arguments") if isinstance(function, dict) else None
                )
    return None


def _id(event: dict[str, Any]) -> str:
    return str(event.get("id", "without id"))[:40]


def _finish_text(action: str, event: dict[str, Any], args: dict[str, Any]) -> str:
    if action != "finish":
        return ""
    return str(args.get("final_thought") or event.get("message") or "")


def _rejected_call(event: dict[str, Any]) -> Step:
    """An error observation caused by no action: the model's tool call was refused before it
    ran (a bad argument, an unparsable call). The agent's turn failed, but no tool was called,
    so it is an agent step marked as an error, not a tool call named `error`."""
    content = event.get("content")
    text = content if isinstance(content, str) else oh.text_of(content)
    when = parse_time(event.get("timestamp"))
    return Step(index=0, kind="agent", text=text, is_error=True, timestamp=when, raw=event)


def _observation_error(kind: str, event: dict[str, Any], text: str) -> bool:
    if kind == "error" or text.startswith("ERROR:"):
        return True
    extras = event.get("extras")
    metadata = extras.get("metadata") if isinstance(extras, dict) else None
    code = event.get("exit_code")
    if isinstance(metadata, dict):
        code = metadata.get("exit_code", code)
    return bool(oh.exit_code_error(code))


def _caused_by(event: Any, action_id: Any) -> bool:
    return isinstance(event, dict) and action_id is not None and event.get("cause") == action_id


def reported_usage(metrics: Any) -> tuple[Usage | None, float | None]:
    """A run's own totals from an eval `metrics` block."""
    if not isinstance(metrics, dict):
        return None, None
    usage = metrics.get("accumulated_token_usage")
    cost = metrics.get("accumulated_cost")
    return (
        (
            oh.usage_from_metrics(usage, "metrics.accumulated_token_usage")
            if isinstance(usage, dict)
            else None
        ),
        float(cost) if isinstance(cost, int | float) else None,
    )
